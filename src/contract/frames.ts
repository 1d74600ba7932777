import type { ConnectionEvent } from "./envelope.js";
import type { ErrorBody } from "./errors.js";

// The envelope's frame builders: the only code that writes wire JSON.
//
// Every reply, refusal, topic frame, event and request on the wire is built
// here, so the envelope's shape lives in one place. They return the frame's
// serialised text (without the newline): the instance writes text, and a
// topic frame's data is serialised once however many subscribers get it.
// Apart from the envelope's schemas (envelope.ts) so that the client and the
// CLI, which build and read frames on every call, never load the schema
// library.

/** A success reply: `ok`, `request_id`, then the result's fields. */
export function encodeReply(requestId: string, result: object): string {
  return JSON.stringify({ ok: true, request_id: requestId, ...result });
}

/** A failure reply; `requestId` is absent when the request could not be
 * identified. */
export function encodeFailure(requestId: string | undefined, error: ErrorBody): string {
  return JSON.stringify(
    requestId === undefined
      ? { ok: false, error: { code: error.code, msg: error.msg } }
      : { ok: false, request_id: requestId, error: { code: error.code, msg: error.msg } },
  );
}

/** A topic frame around data already serialised (`dataJson`). */
export function encodeTopicFrame(
  topic: string,
  instance: string,
  dataJson: string,
  snapshot: boolean,
): string {
  return `{"ev":"topic","topic":${JSON.stringify(topic)},${snapshot ? '"snapshot":true,' : ""}"instance":${JSON.stringify(instance)},"data":${dataJson}}`;
}

/** A connection event (§1.7). */
export function encodeEvent(event: ConnectionEvent): string {
  return JSON.stringify(event);
}

/** A request: the op's arguments beside the envelope fields, flat. */
export function encodeRequest(op: string, requestId: string, args: object): string {
  return JSON.stringify({ ...args, op, request_id: requestId });
}

/** What a client does with an inbound frame: `ok` → reply; `ev: "topic"` →
 * topic frame; any other `ev` → connection event; anything else is not a
 * frame of this contract. */
export function classifyInbound(frame: unknown): "reply" | "topic" | "event" | undefined {
  if (typeof frame !== "object" || frame === null) return undefined;
  const f = frame as Record<string, unknown>;
  if (typeof f.ok === "boolean") return "reply";
  if (f.ev === "topic") return "topic";
  if (typeof f.ev === "string") return "event";
  return undefined;
}
