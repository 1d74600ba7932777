import { MAX_FRAME_BYTES, REQUEST_ID_MAX_CHARS } from "./constants.js";
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
//
// MAX_FRAME_BYTES holds here for everything the instance writes (issue 8,
// item 12): inputs are bounded where they enter (constants.ts), and what would
// still exceed the ceiling is never written — a reply becomes an
// `internal_error` failure, and a topic frame comes back `undefined` for its
// caller to split or refuse. Failure replies are small by construction.

/**
 * UTF-8 length of `text`, counted without encoding it (this module runs
 * where Node's Buffer does not). Stops counting once past `stopAbove`.
 */
export function utf8Length(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= stopAbove; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether a serialised frame (without its newline) is within the ceiling. */
export function fitsFrame(line: string): boolean {
  // A UTF-16 unit is at most 3 bytes: most lines need no counting.
  return line.length * 3 <= MAX_FRAME_BYTES || utf8Length(line, MAX_FRAME_BYTES) <= MAX_FRAME_BYTES;
}

/** A success reply: `ok`, `request_id`, then the result's fields. A result too
 * large for a frame is answered `internal_error` instead, saying so. */
export function encodeReply(requestId: string, result: object): string {
  const line = JSON.stringify({ ok: true, request_id: requestId, ...result });
  if (fitsFrame(line)) return line;
  return encodeFailure(requestId, {
    code: "internal_error",
    msg: `the reply would be ${utf8Length(line)} bytes, over MAX_FRAME_BYTES (${MAX_FRAME_BYTES})`,
  });
}

/** The longest `msg` a failure carries (UTF-16 units); longer is cut with "…". */
const FAILURE_MSG_MAX = 8192;

/** A failure reply; `requestId` is absent when the request could not be
 * identified — also when it is too long to be one (dispatch refuses those). */
export function encodeFailure(requestId: string | undefined, error: ErrorBody): string {
  let msg = error.msg;
  if (msg.length > FAILURE_MSG_MAX) {
    const cut = msg.charCodeAt(FAILURE_MSG_MAX - 1);
    msg = `${msg.slice(0, cut >= 0xd800 && cut <= 0xdbff ? FAILURE_MSG_MAX - 1 : FAILURE_MSG_MAX)}…`;
  }
  return JSON.stringify(
    requestId === undefined || requestId.length > 2 * REQUEST_ID_MAX_CHARS
      ? { ok: false, error: { code: error.code, msg } }
      : { ok: false, request_id: requestId, error: { code: error.code, msg } },
  );
}

/** A topic frame around data already serialised (`dataJson`), or `undefined`
 * when it would exceed MAX_FRAME_BYTES: the caller splits the data
 * (`topicDataBudget` says how much fits) or refuses it. */
export function encodeTopicFrame(
  topic: string,
  instance: string,
  dataJson: string,
  snapshot: boolean,
): string | undefined {
  const line = `{"ev":"topic","topic":${JSON.stringify(topic)},${snapshot ? '"snapshot":true,' : ""}"instance":${JSON.stringify(instance)},"data":${dataJson}}`;
  return fitsFrame(line) ? line : undefined;
}

/** How many bytes of serialised `data` a frame of `topic` from `instance` can
 * carry, snapshot flag included. */
export function topicDataBudget(topic: string, instance: string): number {
  return MAX_FRAME_BYTES - utf8Length(encodeTopicFrame(topic, instance, "", true)!);
}

/** A connection event (§1.7): a few fixed fields, small by construction. */
export function encodeEvent(event: ConnectionEvent): string {
  return JSON.stringify(event);
}

/** A request: the op's arguments beside the envelope fields, flat. Not
 * bounded here: the receiver answers an oversized one `bad_request`. */
export function encodeRequest(op: string, requestId: string, args: object): string {
  // The envelope appended to the arguments' own text: ~4× cheaper than
  // stringifying a spread copy, which a client pipelining thousands pays
  // for each. Arguments naming an envelope field take the copy, so the
  // envelope's value stands once.
  const body = JSON.stringify(args);
  if (body[body.length - 1] !== "}" || "op" in args || "request_id" in args)
    return JSON.stringify({ ...args, op, request_id: requestId });
  const envelope = `"op":${JSON.stringify(op)},"request_id":${JSON.stringify(requestId)}}`;
  return body.length === 2 ? `{${envelope}` : `${body.slice(0, -1)},${envelope}`;
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
