import {
  type CallerOf,
  gateRefusal,
  isOpName,
  OP_ATTRIBUTES,
  type OpAttributes,
  type OpName,
  ownSidRefusal,
} from "../contract/attributes.js";
import { helloIdentity, helloRefusal } from "../contract/connect.js";
import { REQUEST_ID_MAX_CHARS } from "../contract/constants.js";
import { type Identity, RequestId } from "../contract/envelope.js";
import { ContractError, type ErrorBody } from "../contract/errors.js";
import { encodeFailure, encodeReply } from "../contract/frames.js";
import type { Capability, Role } from "../contract/identifiers.js";
import { OP_SCHEMAS, type OpRequest, type OpResult } from "../contract/schemas.js";
import { argRuleViolations, isValid, validationErrors } from "../contract/validate.js";
import { isDamagedError } from "../store/database.js";
import type { Logger } from "../util/logger.js";
import type { Forwarder } from "./mesh/forward.js";
import type { Connection, InboundHandler } from "./wire/connection.js";

/** What a handler of `op` is told. `caller` is narrowed by the op's row (a
 * session-only op gets a session with its sid); `role` is present only for
 * `scope: "role"` ops, whose reply depends on who asks. */
export interface RequestContext<Op extends OpName = OpName> {
  conn: Connection;
  caller: CallerOf<Op>;
  role?: Role;
  /** Run after the reply is queued (e.g. a subscription's snapshot). */
  afterReply(fn: () => void): void;
}

export type Handler<Op extends OpName> = (
  args: OpRequest<Op>,
  ctx: RequestContext<Op>,
) => OpResult<Op> | Promise<OpResult<Op>>;

/** The implementation of each op this build has; the rest answer
 * `internal_error` "not implemented in this build" — except the HTTP-carried
 * auth ops, which no frame reaches (`bad_request`). */
export type Handlers = { [Op in OpName]?: Handler<Op> };

/** Instance-private frames answered on the Unix socket only, outside the op
 * table (auth/handlers.ts, mesh/admin-handlers.ts). */
export type AdminHandlers = Record<
  string,
  (frame: Record<string, unknown>) => object | Promise<object>
>;

/** What a capability adds to the instance (its folder's `register.ts`). */
export interface Contribution {
  handlers: Handlers;
  admin?: AdminHandlers;
  /** Capabilities it offers from the start (contract §3.2). */
  capabilities?: readonly Capability[];
}

/** What dispatch is built on. */
export interface DispatchDeps {
  instanceId: string;
  handlers: Handlers;
  admin: AdminHandlers;
  capabilities: ReadonlySet<Capability>;
  log: Logger;
  /** Told of every request about to run (a session's activity). */
  onRequest(identity: Identity): void;
  /** Stage 6 over the mesh (DR-0048); without it every op is answered here. */
  forwarder?: Forwarder;
  /** The peer a connection is a verified mesh link to (mesh/mesh.ts). */
  linkPeer?(conn: Connection): string | undefined;
}

/** What stages 0–6 hand on to the handler stage. */
interface Admitted {
  op: OpName;
  attrs: OpAttributes;
  frame: Record<string, unknown>;
  requestId: string;
  /** Stage 6 decided another instance answers it (DR-0048). */
  forwardTo?: string;
  /** Stage 6 decides by this addressee's owner, at the handler stage
   * (`message_send`, which reads who runs first). */
  addressee?: string;
}

/**
 * Dispatch (contract §1.8): a fixed pipeline of named stages, each of which
 * either answers or passes on, in exactly this order —
 * bad_request → unknown_op → invalid_args → hello_required → forbidden →
 * capability_unavailable → forward → handler → internal_error.
 * Every stage reads the attribute tables; no handler writes its own role check,
 * nor its own "a session names only its own sid" (`own_sid`, at the handler
 * stage).
 */
export class Dispatcher implements InboundHandler {
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private stopping = false;
  /** A connection's greeting still settling, which its later frames wait for. */
  private readonly greetings = new WeakMap<Connection, Promise<void>>();
  private readonly instanceId: string;
  private readonly handlers: Handlers;
  private readonly admin: AdminHandlers;
  private readonly capabilities: ReadonlySet<Capability>;
  private readonly log: Logger;
  private readonly onRequest: (identity: Identity) => void;
  private readonly forwarder: Forwarder | undefined;
  private readonly linkPeer: (conn: Connection) => string | undefined;

  constructor(deps: DispatchDeps) {
    this.instanceId = deps.instanceId;
    this.handlers = deps.handlers;
    this.admin = deps.admin;
    this.capabilities = deps.capabilities;
    this.log = deps.log;
    this.onRequest = deps.onRequest;
    this.forwarder = deps.forwarder;
    this.linkPeer = deps.linkPeer ?? (() => undefined);
  }

  /** Handle one inbound frame. Frames that follow a `hello` still settling on
   * the same connection wait for it: identity is a barrier, nothing else is. */
  frame(conn: Connection, line: string): void {
    const pending = this.greetings.get(conn);
    const next = pending ? pending.then(() => this.handle(conn, line)) : this.handle(conn, line);
    if (next === undefined) return;
    this.greetings.set(conn, next);
    void next.finally(() => {
      if (this.greetings.get(conn) === next) this.greetings.delete(conn);
    });
  }

  /**
   * Who a request is dispatched as. On a client connection: the connection's
   * identity. On a verified mesh link (contract §8): the `caller` the
   * forwarder stated, re-authorized from scratch by every stage; without one,
   * the instance itself. A request whose `hops` already holds this instance
   * went round a loop: it is dropped without a reply (null).
   */
  private asCaller(conn: Connection, frame: unknown): Identity | undefined | null {
    const peer = this.linkPeer(conn);
    if (peer === undefined) return conn.identity;
    const f = frame as { op?: unknown; hops?: unknown; caller?: unknown; request_id?: unknown };
    if (Array.isArray(f.hops) && f.hops.includes(this.instanceId)) {
      this.log.warn(
        {
          peer,
          op: typeof f.op === "string" ? f.op : undefined,
          hops: f.hops,
          request_id: f.request_id,
        },
        "dropped a forwarded request that looped back here",
      );
      return null;
    }
    const c = f.caller as { role?: unknown; sid?: unknown } | undefined;
    if (typeof c === "object" && c !== null && typeof c.role === "string")
      // Shape-checked at stage 2 (the envelope's Caller), before any stage reads it.
      return c.role === "session"
        ? { role: "session", sid: c.sid as string }
        : ({ role: c.role } as Identity);
    return { role: "instance" };
  }

  /** Answer a frame that exceeded MAX_FRAME_BYTES (never parsed). */
  oversized(conn: Connection): void {
    conn.send(
      encodeFailure(undefined, {
        code: "bad_request",
        msg: "frame exceeds MAX_FRAME_BYTES (1048576 bytes)",
      }),
    );
  }

  /** Refuse new requests from now on (a graceful stop). */
  stop(): void {
    this.stopping = true;
  }

  /** Returns a promise only for a `hello`, which later frames must wait for. */
  private handle(conn: Connection, line: string): Promise<void> | undefined {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      conn.send(encodeFailure(undefined, { code: "bad_request", msg: "frame is not valid JSON" }));
      return undefined;
    }
    if (conn.kind === "uds" && this.adminFrame(conn, frame)) return undefined;
    const identity = this.asCaller(conn, frame);
    if (identity === null) return undefined;
    let staged: ErrorBody | Admitted;
    try {
      staged = this.admit({ identity }, frame);
    } catch (error) {
      // A rule that throws on some input is a bug to fix, never a crash.
      this.log.error({ err: error }, "admission failed");
      staged = { code: "internal_error", msg: "the request could not be checked" };
    }
    if ("code" in staged) {
      conn.send(encodeFailure(requestIdOf(frame), staged));
      return undefined;
    }
    const run = this.run(conn, staged, identity);
    return staged.op === "hello" ? run : undefined;
  }

  /** An administrative frame (its `op` names an admin handler): answered
   * here, outside the op table. False for anything else. */
  private adminFrame(conn: Connection, frame: unknown): boolean {
    const f = frame as Record<string, unknown> | null;
    const name = typeof f?.op === "string" ? f.op : undefined;
    const handler =
      name === undefined || !Object.hasOwn(this.admin, name) ? undefined : this.admin[name];
    const requestId = requestIdOf(frame);
    if (handler === undefined || requestId === undefined) return false;
    // Counted like any request: a half-closed connection waits for its answer.
    conn.requestStarted();
    void (async () => {
      try {
        conn.send(encodeReply(requestId, await handler(f as Record<string, unknown>)));
      } catch (error) {
        if (error instanceof ContractError) conn.send(encodeFailure(requestId, error.toBody()));
        else {
          this.log.error({ err: error, op: name }, "administrative frame failed");
          conn.send(encodeFailure(requestId, { code: "internal_error", msg: `${name} failed` }));
        }
      } finally {
        conn.requestSettled();
      }
    })();
    return true;
  }

  /** Stages 0–6: everything decided by the tables before a handler runs. */
  admit(conn: Pick<Connection, "identity">, frame: unknown): ErrorBody | Admitted {
    // 0. a JSON object with op and request_id
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return { code: "bad_request", msg: "frame is not a JSON object" };
    }
    const f = frame as Record<string, unknown>;
    const requestId = requestIdOf(f);
    if (requestId === undefined)
      return { code: "bad_request", msg: requestIdRefusal(f.request_id) };
    if (typeof f.op !== "string") return { code: "bad_request", msg: "missing op" };
    // 1. the op is in the table
    if (!isOpName(f.op)) return { code: "unknown_op", msg: `unknown op: ${f.op.slice(0, 100)}` };
    const op = f.op;
    const attrs: OpAttributes = OP_ATTRIBUTES[op];
    // 2. arguments: the schema, then the rules no schema states
    const invalid = validationErrors(OP_SCHEMAS[op].request, f);
    if (invalid.length > 0) return { code: "invalid_args", msg: invalid.join("\n") };
    if (op === "hello") {
      const refused = helloRefusal(f as OpRequest<"hello">, conn.identity !== undefined);
      if (refused !== undefined) return refused;
    } else {
      const broken = argRuleViolations(op, f);
      if (broken.length > 0) return { code: "invalid_args", msg: broken.join("\n") };
    }
    // 3–5. a settled identity, a role the row admits, a capability this instance has
    const refused = gateRefusal(op, attrs, conn.identity?.role, this.capabilities);
    if (refused !== undefined) return refused;
    // 6. an instance-local op whose subject (or to_instance) is elsewhere
    const route =
      this.forwarder !== undefined ? this.forwarder.route(op, f) : this.unlinked(attrs, f);
    if (route !== undefined && "code" in route) return route;
    return {
      ...{ op, attrs, frame: f, requestId },
      ...(route === undefined ? {} : "to" in route ? { forwardTo: route.to } : route),
    };
  }

  /** Stage 6 without a mesh: an op addressed to another instance cannot get
   * there. */
  private unlinked(attrs: OpAttributes, f: Record<string, unknown>): ErrorBody | undefined {
    if (
      attrs.locality === "instance-local" &&
      typeof f.to_instance === "string" &&
      f.to_instance !== this.instanceId
    ) {
      return { code: "instance_unreachable", msg: `no link to instance ${f.to_instance}` };
    }
    return undefined;
  }

  /** Stage 7: the implementation — or, for a forwarded op, the owner's reply;
   * a failure that is not the caller's becomes internal_error with a log
   * line, never a crash. */
  private async run(
    conn: Connection,
    admitted: Admitted,
    identity: Identity | undefined,
  ): Promise<void> {
    const { op, attrs, frame, requestId } = admitted;
    const fail = (error: ErrorBody) => conn.send(encodeFailure(requestId, error));
    if (this.stopping) return fail({ code: "internal_error", msg: "instance is shutting down" });
    const forwarded = admitted.forwardTo !== undefined && this.forwarder !== undefined;
    const handler = this.answerer(admitted, identity);
    if (handler === undefined) {
      // An HTTP-carried op (contract §4.1 `carrier`) sent as a frame: this
      // transport does not carry it — the frame's fault, not the instance's.
      if (attrs.carrier === "http")
        return fail({
          code: "bad_request",
          msg: `${op} is carried over HTTP only (POST <endpoint>auth/…), never as a frame on a connection`,
        });
      return fail({ code: "internal_error", msg: `${op}: not implemented in this build` });
    }
    if (identity !== undefined) this.onRequest(identity);
    // Scope `role` narrowed by the row, here where the answer is given.
    const foreign = forwarded ? undefined : ownSidRefusal(attrs, identity, frame.sid);
    if (foreign !== undefined) return fail(foreign);
    const after: (() => void)[] = [];
    const ctx: RequestContext = {
      conn,
      caller: identity as CallerOf<OpName>,
      afterReply: (fn) => after.push(fn),
    };
    if (attrs.scope === "role" && identity !== undefined) ctx.role = identity.role;
    this.inFlight++;
    conn.requestStarted();
    try {
      const result = await handler(frame as OpRequest<OpName>, ctx);
      if (op === "hello") conn.greet(helloIdentity(frame as OpRequest<"hello">));
      conn.send(encodeReply(requestId, result));
      try {
        for (const fn of after) fn();
      } catch (error) {
        // The request was answered; what was to follow it (a snapshot) cannot
        // come. Ending the connection says so, rather than leaving the peer
        // waiting for a frame that never arrives.
        this.log.error({ err: error, op, request_id: requestId }, "after the reply: failed");
        conn.close();
      }
    } catch (error) {
      if (error instanceof ContractError) {
        fail(error.toBody());
      } else {
        this.log.error({ err: error, op, request_id: requestId }, "handler failed");
        const msg = isDamagedError(error)
          ? `${op} failed: the state database is damaged; stop the instance and start it with \`ccmsg daemon run --recover\` (the damaged file is kept)`
          : `${op} failed inside the instance`;
        fail({ code: "internal_error", msg });
      }
    } finally {
      conn.requestSettled();
      if (--this.inFlight === 0) {
        for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }

  /** Stage 6's decision carried out: the owner over the mesh answers (as
   * whom it came: the connection's identity, or the caller a peer stated);
   * for an addressee's op the owner answers once it is known, else this
   * instance's handler; otherwise the handler. */
  private answerer(
    { op, frame, forwardTo, addressee }: Admitted,
    identity: Identity | undefined,
  ): Handler<OpName> | undefined {
    const local = this.handlers[op] as Handler<OpName> | undefined;
    const forwarder = this.forwarder;
    if (forwarder === undefined) return local;
    if (forwardTo !== undefined)
      return () => forwarder.forward(forwardTo, frame, identity) as never;
    if (addressee === undefined || local === undefined) return local;
    return async (args, ctx) =>
      ((await forwarder.messageSend({ ...frame, to: addressee }, identity)) ??
        local(args, ctx)) as never;
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

/** Why a frame's request_id cannot identify it, in words. */
function requestIdRefusal(id: unknown): string {
  if (id === undefined) return "missing request_id";
  if (typeof id !== "string")
    return `request_id must be a string, not ${id === null ? "null" : Array.isArray(id) ? "an array" : `a ${typeof id}`}`;
  if (id === "") return "request_id is empty";
  return `request_id is longer than ${REQUEST_ID_MAX_CHARS} characters`;
}

/** The request_id to echo: a string within RequestId's limits, else none. */
function requestIdOf(frame: unknown): string | undefined {
  const id = (frame as { request_id?: unknown } | null)?.request_id;
  return typeof id === "string" && isValid(RequestId, id) ? id : undefined;
}
