import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  AttentionDecideArgs,
  type AttentionDecideResult,
  AttentionReadArgs,
  type AttentionReadResult,
  decideViolations,
} from "../../contract/attention.js";
import type { Identity } from "../../contract/envelope.js";
import { ContractError, contractError } from "../../contract/errors.js";
import { isInstanceId, isSid } from "../../contract/identifiers.js";
import { validationErrors } from "../../contract/validate.js";
import { answerUnreadableBody, sendJson } from "../http/json-reply.js";
import type { Forwarder } from "../mesh/forward.js";
import type { MeshPort } from "../mesh/port.js";
import type { Attention } from "./engine.js";
import { meshRead } from "./mesh-read.js";

/**
 * The attention queue over HTTP (this implementation's extension, DR-0062),
 * for a person's own tools beside the console:
 *
 * - `GET  /api/attention[?pending=1][&sid=…][&limit=n][&before=id][&scope=mesh]` →
 *   `attention_read`'s result, `{ ok: true, items, pending, more?, unread? }`; with
 *   `scope=mesh` every linked instance's items too (each item names its instance)
 * - `POST /api/attention/:id/decide` with `{ sid, behavior, message?, always?, answers?,
 *   instance? }` → `attention_decide` with `via: "api"`, on `instance` (default: this one;
 *   another is reached over the mesh and decides there, contract §8): 200
 *   `{ ok: true, outcome: "decided", item }`;
 *   a decision that came second or late is 409 `{ ok: false, outcome: "refused", reason,
 *   error, item }` (the item shows what won and keeps this one in `refused`).
 *
 * Contract refusals keep their code: `invalid_args` 400, `forbidden` 403,
 * `not_found` / `session_not_found` 404, `instance_unreachable` 502, others 500.
 * Behind the gate's Host, Origin and owner checks (gate.ts), like every route;
 * a decision takes only a JSON body (no foreign page sends one without a
 * preflight).
 */
export interface AttentionHttpDeps {
  read(args: AttentionReadArgs): AttentionReadResult | Promise<AttentionReadResult>;
  /** Decides as the person, through `via`, on `instance` (absent: here). */
  decide(args: AttentionDecideArgs, instance?: string): Promise<AttentionDecideResult>;
}

const PERSON: Identity = { role: "user" };

/** The routes' view of the engine and the mesh: the person reads and
 * decides, through the API. */
export function attentionHttp(o: {
  attention: Attention;
  instanceId: string;
  mesh: Pick<MeshPort, "id" | "instances" | "linked" | "request">;
  forwarder: Pick<Forwarder, "route" | "forward">;
}): AttentionHttpDeps {
  return {
    read: (args) => {
      const here = o.attention.read(args);
      return args.scope === "mesh" ? meshRead(o, args, PERSON, here) : here;
    },
    async decide(args, instance) {
      if (instance === undefined || instance === o.instanceId)
        return o.attention.decide(args, { role: "user", instance: o.instanceId, via: "api" });
      const frame = { op: "attention_decide", ...args, to_instance: instance };
      const route = o.forwarder.route("attention_decide", frame);
      if (route !== undefined && "code" in route) throw contractError(route.code, route.msg);
      if (route === undefined || !("to" in route))
        throw contractError("instance_unreachable", `no link to instance ${instance}`);
      return (await o.forwarder.forward(route.to, frame, PERSON)) as AttentionDecideResult;
    },
  };
}

export async function attentionHttpPlugin(app: FastifyInstance, deps: AttentionHttpDeps) {
  await app.register(
    (api, _opts, done) => {
      routes(api, deps);
      done();
    },
    { prefix: "/api/attention" },
  );
}

function routes(app: FastifyInstance, deps: AttentionHttpDeps): void {
  app.setErrorHandler(answerUnreadableBody);
  app.setNotFoundHandler((_req, reply) => sendJson(reply, 404, { ok: false, error: "not found" }));

  app.get("/", async (req, reply) => {
    try {
      const result = await deps.read(readArgs(req.query as Record<string, unknown>));
      return sendJson(reply, 200, { ok: true, ...result });
    } catch (error) {
      return refused(reply, error);
    }
  });

  app.post("/:id/decide", async (req, reply) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json")
      return sendJson(reply, 415, { ok: false, error: "a decision is an application/json body" });
    try {
      const { args, instance } = decideArgs(req);
      const result = await deps.decide(args, instance);
      if (result.outcome === "decided") return sendJson(reply, 200, { ok: true, ...result });
      return sendJson(reply, 409, { ok: false, ...result, error: result.reason ?? "refused" });
    } catch (error) {
      return refused(reply, error);
    }
  });
}

function readArgs(query: Record<string, unknown>): AttentionReadArgs {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw contractError("invalid_args", `${name}: give it once`);
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const args: AttentionReadArgs = {};
  const pending = one("pending");
  if (pending !== undefined) {
    if (!["1", "true", "0", "false"].includes(pending))
      throw contractError("invalid_args", "pending: 1 or 0");
    args.pending = pending === "1" || pending === "true";
  }
  const scope = one("scope");
  if (scope !== undefined) {
    if (scope !== "mesh" && scope !== "local")
      throw contractError("invalid_args", "scope: mesh or local");
    args.scope = scope;
  }
  const sid = one("sid");
  if (sid !== undefined) {
    if (!isSid(sid)) throw contractError("invalid_args", "sid: a lower-case UUID");
    args.sid = sid;
  }
  for (const name of ["limit", "before"] as const) {
    const v = one(name);
    if (v === undefined) continue;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw contractError("invalid_args", `${name}: a whole number ≥ 1`);
    args[name] = n;
  }
  const invalid = validationErrors(AttentionReadArgs, args);
  if (invalid.length > 0) throw contractError("invalid_args", invalid.join("\n"));
  return args;
}

function decideArgs(req: FastifyRequest): { args: AttentionDecideArgs; instance?: string } {
  const id = Number((req.params as { id?: string }).id);
  const body = req.body;
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw contractError("invalid_args", "the body is a JSON object");
  const { instance, ...rest } = body as Record<string, unknown>;
  if (instance !== undefined && (typeof instance !== "string" || !isInstanceId(instance)))
    throw contractError("invalid_args", "instance: an instance id (32 hex digits)");
  const args = { ...rest, id, via: "api" };
  const invalid = validationErrors(AttentionDecideArgs, args);
  if (invalid.length > 0) throw contractError("invalid_args", invalid.join("\n"));
  const broken = decideViolations(args as AttentionDecideArgs);
  if (broken.length > 0) throw contractError("invalid_args", broken.join("\n"));
  return { args: args as AttentionDecideArgs, ...(instance === undefined ? {} : { instance }) };
}

const STATUS: Record<string, number> = {
  invalid_args: 400,
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  session_not_found: 404,
  instance_unreachable: 502,
};

function refused(reply: FastifyReply, error: unknown) {
  if (!(error instanceof ContractError)) {
    reply.log.error({ err: error }, "attention route failed");
    return sendJson(reply, 500, {
      ok: false,
      code: "internal_error",
      error: "failed inside the instance",
    });
  }
  const status = STATUS[error.code] ?? error.status ?? 500;
  return sendJson(reply, status, { ok: false, code: error.code, error: error.message });
}
