import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { type LlmSourceConfig, LOCAL_LLM_SOURCE } from "../../config/llm.js";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { exceedsJsonDepth } from "../../contract/json-depth.js";
import { validationErrors } from "../../contract/validate.js";
import { LlmEvent } from "../../gateway/event.js";
import { sendJson } from "../http/json-reply.js";
import { WEBHOOK_PATH } from "./webhook-path.js";

/** The route's body ceiling (contract §1.1): 1 MiB, the frame ceiling. */
export const WEBHOOK_BODY_LIMIT = MAX_FRAME_BYTES;

export interface WebhookDeps {
  /** By source name (config `llm.sources`). */
  sources: Record<string, LlmSourceConfig>;
  /** Source `local`, when the config names none so: the person's own
   * gateway, proven with the owner credential (`owner`). */
  local?: boolean;
  /** A checked batch, applied whole. */
  ingest(events: LlmEvent[]): void;
}

/** Whether a request carries the owner's own credential from this machine
 * (the listener's owner check). */
export type OwnerCheck = (req: FastifyRequest) => boolean;

/**
 * The webhook route (contract §1.1) as its own encapsulated plugin:
 * `POST …/webhook/<source>` with `Authorization: Bearer <token>`. An unknown
 * source is 404 and a wrong token 401, both decided before the body is read;
 * a body over 1 MiB is 413; a body that is not a JSON array of events
 * (gateway/event.ts) is 400 and nothing of it is applied; else 204.
 *
 * The source's own token is its proof, so the gate (http/gate.ts) lets this path past
 * the owner check (a gateway on another machine holds no owner secret); the
 * Host and Origin rule still applies. Source `local` with no such source
 * configured takes the owner's secret from this machine instead.
 */
export async function webhookPlugin(
  app: FastifyInstance,
  deps: WebhookDeps & { owner?: OwnerCheck },
) {
  // Digests of the tokens: compared with timingSafeEqual, which needs equal
  // lengths, so a token's length leaks nothing either.
  const digests = new Map(
    Object.entries(deps.sources).map(([name, s]) => [name, digest(s.token)] as const),
  );
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "*",
    { parseAs: "buffer", bodyLimit: WEBHOOK_BODY_LIMIT },
    (_req, body, done) => done(null, body),
  );
  app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) => {
    const status = error.statusCode === 413 ? 413 : error.statusCode === 400 ? 400 : 500;
    return sendJson(reply, status, {
      ok: false,
      error: status === 413 ? "body over 1 MiB" : "bad body",
    });
  });
  app.addHook("onRequest", async (req, reply) => {
    const source = WEBHOOK_PATH.exec(req.url.split("?")[0]!)?.[1];
    const expected = source === undefined ? undefined : digests.get(source);
    if (expected === undefined) {
      // The person's own gateway, zero-config: the owner's proof is the token.
      if (source === LOCAL_LLM_SOURCE && deps.local === true && deps.owner !== undefined) {
        if (deps.owner(req)) return;
        return sendJson(reply, 401, { ok: false, error: "bad token" });
      }
      return sendJson(reply, 404, { ok: false, error: "not found" });
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (bearer === undefined || !timingSafeEqual(digest(bearer), expected))
      return sendJson(reply, 401, { ok: false, error: "bad token" });
  });
  app.post("/*", async (req, reply) => {
    const raw = req.body;
    if (!Buffer.isBuffer(raw)) return sendJson(reply, 400, { ok: false, error: "a JSON array" });
    const problem = problemOf(raw);
    if (typeof problem === "string") return sendJson(reply, 400, { ok: false, error: problem });
    deps.ingest(problem);
    return reply.code(204).send();
  });
}

/** The batch's events, or why it is refused (naming the first bad item). */
function problemOf(raw: Buffer): LlmEvent[] | string {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    return "not JSON";
  }
  if (!Array.isArray(value)) return "must be a JSON array of events";
  if (exceedsJsonDepth(value)) return "nested too deep";
  for (const [i, item] of value.entries()) {
    const errors = validationErrors(LlmEvent, item);
    if (errors.length > 0) return `[${i}] ${errors.join("; ")}`;
  }
  return value as LlmEvent[];
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
