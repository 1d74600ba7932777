import type { Logger } from "pino";
import { isOpName, OP_ATTRIBUTES, type OpAttributes, type OpName } from "../contract/attributes.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { ContractError, type ErrorCode } from "../contract/errors.js";
import type { Capability, Role } from "../contract/identifiers.js";
import { OP_SCHEMAS } from "../contract/schemas.js";
import { argRuleViolations, validationErrors } from "../contract/validate.js";
import type { Connection, Identity } from "./connection.js";

/** What a handler is told. `role` is present only for `scope: "role"` ops:
 * every other handler must not care who asked (the table already decided). */
export interface RequestContext {
  conn: Connection;
  identity: Identity | undefined;
  role?: Role;
  /** Run after the reply is written (e.g. a subscription's snapshot). */
  afterReply(fn: () => void): void;
}

export type Handler = (
  frame: Record<string, unknown>,
  ctx: RequestContext,
) => object | Promise<object>;

export type Handlers = Partial<Record<OpName, Handler>>;

class Refusal {
  constructor(
    readonly code: ErrorCode,
    readonly msg: string,
  ) {}
}

/**
 * Dispatch (contract §1.8): a fixed pipeline of named stages, each of which
 * either answers or passes on, in exactly this order —
 * bad_request → unknown_op → invalid_args → hello_required → forbidden →
 * capability_unavailable → forward → handler → internal_error.
 * Every stage reads the attribute tables; no handler writes its own role check.
 */
export class Dispatcher {
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  stopping = false;

  constructor(
    private readonly instanceId: string,
    private readonly handlers: Handlers,
    private readonly capabilities: ReadonlySet<Capability>,
    private readonly log: Logger,
    private readonly onRequest: (identity: Identity) => void,
  ) {}

  /** Handle one inbound line. Requests that follow a `hello` still settling on
   * the same connection wait for it: identity is a barrier, nothing else is. */
  handleLine(conn: Connection, line: string): void {
    const pending = greetings.get(conn);
    const next = pending ? pending.then(() => this.handle(conn, line)) : this.handle(conn, line);
    if (next === undefined) return;
    greetings.set(conn, next);
    void next.finally(() => {
      if (greetings.get(conn) === next) greetings.delete(conn);
    });
  }

  /** Answer a frame that exceeded MAX_FRAME_BYTES (never parsed). */
  oversized(conn: Connection): void {
    this.reply(
      conn,
      undefined,
      new Refusal("bad_request", "frame exceeds MAX_FRAME_BYTES (1048576 bytes)"),
    );
  }

  /** Returns a promise only for a `hello`, which later frames must wait for. */
  private handle(conn: Connection, line: string): Promise<void> | undefined {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      this.reply(conn, undefined, new Refusal("bad_request", "frame is not valid JSON"));
      return undefined;
    }
    const requestId = requestIdOf(frame);
    const staged = this.stages(conn, frame, requestId);
    if (staged instanceof Refusal) {
      this.reply(conn, requestId, staged);
      return undefined;
    }
    const run = this.run(
      conn,
      staged.op,
      staged.attrs,
      frame as Record<string, unknown>,
      requestId!,
    );
    return staged.op === "hello" ? run : undefined;
  }

  /** Stages 0–6: everything decided by the tables before a handler runs. */
  private stages(
    conn: Connection,
    frame: unknown,
    requestId: string | undefined,
  ): Refusal | { op: OpName; attrs: OpAttributes } {
    // 0. a JSON object with op and request_id
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return new Refusal("bad_request", "frame is not a JSON object");
    }
    const f = frame as Record<string, unknown>;
    if (requestId === undefined) return new Refusal("bad_request", "missing request_id");
    if (typeof f.op !== "string") return new Refusal("bad_request", "missing op");
    // 1. the op is in the table
    if (!isOpName(f.op)) return new Refusal("unknown_op", `unknown op: ${f.op.slice(0, 100)}`);
    const op = f.op;
    const attrs: OpAttributes = OP_ATTRIBUTES[op];
    // 2. arguments (schema, then the rules no schema states)
    const invalid = validationErrors(OP_SCHEMAS[op].request, f);
    if (invalid.length > 0) return new Refusal("invalid_args", invalid.join("\n"));
    if (op === "hello") {
      if (conn.identity !== undefined) {
        return new Refusal("bad_request", "this connection has already greeted");
      }
      if (f.protocol_version !== PROTOCOL_VERSION) {
        return new Refusal(
          "bad_request",
          `generation ${String(f.protocol_version)} is not spoken here (this instance speaks ${PROTOCOL_VERSION})`,
        );
      }
    }
    const broken = argRuleViolations(op, f);
    if (broken.length > 0) return new Refusal("invalid_args", broken.join("\n"));
    // 3. a settled identity
    const identity = conn.identity;
    if (attrs.needs_hello && identity === undefined) {
      return new Refusal("hello_required", `${op} needs a hello first`);
    }
    // 4. the role may call it
    if (identity !== undefined && !attrs.roles.includes(identity.role)) {
      return new Refusal("forbidden", `${op} is not open to role ${identity.role}`);
    }
    // 5. the capability exists here
    if (attrs.capability !== undefined && !this.capabilities.has(attrs.capability)) {
      return new Refusal("capability_unavailable", `${op} needs capability ${attrs.capability}`);
    }
    // 6. forward an instance-local op addressed elsewhere (no mesh links yet)
    if (
      attrs.locality === "instance-local" &&
      typeof f.to_instance === "string" &&
      f.to_instance !== this.instanceId
    ) {
      return new Refusal("instance_unreachable", `no link to instance ${f.to_instance}`);
    }
    return { op, attrs };
  }

  /** Stage 7: the implementation; a failure that is not the caller's becomes
   * internal_error with a log line, never a crash. */
  private async run(
    conn: Connection,
    op: OpName,
    attrs: OpAttributes,
    frame: Record<string, unknown>,
    requestId: string,
  ): Promise<void> {
    if (this.stopping) {
      this.reply(conn, requestId, new Refusal("internal_error", "instance is shutting down"));
      return;
    }
    const handler = this.handlers[op];
    if (handler === undefined) {
      this.reply(
        conn,
        requestId,
        new Refusal("internal_error", `${op}: not implemented in this build`),
      );
      return;
    }
    if (conn.identity !== undefined) this.onRequest(conn.identity);
    const after: (() => void)[] = [];
    const ctx: RequestContext = {
      conn,
      identity: conn.identity,
      afterReply: (fn) => after.push(fn),
    };
    if (attrs.scope === "role" && conn.identity !== undefined) ctx.role = conn.identity.role;
    this.inFlight++;
    try {
      const result = await handler(frame, ctx);
      conn.send(JSON.stringify({ ok: true, request_id: requestId, ...result }));
      for (const fn of after) fn();
    } catch (error) {
      if (error instanceof ContractError) {
        this.reply(conn, requestId, new Refusal(error.code, error.message));
      } else {
        this.log.error({ err: error, op, request_id: requestId }, "handler failed");
        this.reply(
          conn,
          requestId,
          new Refusal("internal_error", `${op} failed inside the instance`),
        );
      }
    } finally {
      if (--this.inFlight === 0) {
        for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }

  private reply(conn: Connection, requestId: string | undefined, refusal: Refusal): void {
    const body: Record<string, unknown> = { ok: false };
    if (requestId !== undefined) body.request_id = requestId;
    body.error = { code: refusal.code, msg: refusal.msg };
    conn.send(JSON.stringify(body));
  }

  /** Resolves once no request is running (or after `timeoutMs`). */
  idle(timeoutMs: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** A connection's greeting still settling, which its later frames wait for. */
const greetings = new WeakMap<Connection, Promise<void>>();

function requestIdOf(frame: unknown): string | undefined {
  const id = (frame as { request_id?: unknown } | null)?.request_id;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}
