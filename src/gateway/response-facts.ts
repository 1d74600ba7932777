import type { LlmEventUsage } from "./event.js";

// What the gateway reads from a Messages API response, on the side of the
// bytes it forwards: the model, the `usage` block and the error type. A
// stream is read incrementally (SseObserver) and only the few lines that can
// carry these are decoded; a plain body is read once it ended.

export interface ResponseFacts {
  model?: string;
  usage: LlmEventUsage;
  /** The provider's error type (`overloaded_error`, …). */
  error?: string;
}

const USAGE_KEYS = [
  "input_tokens",
  "output_tokens",
  "cache_creation_input_tokens",
  "cache_read_input_tokens",
] as const;

/** A line longer than this cannot be a usage or error line worth holding:
 * it is skipped to its end instead of buffered. */
const MAX_LINE_BYTES = 256 * 1024;
const NEWLINE = 0x0a;
const DATA = Buffer.from("data:");
const EVENT = Buffer.from("event:");
/** The events that carry the model, usage or an error. */
const TELLING = new Set(["message_start", "message_delta", "error"]);
// Quotes inside JSON strings are escaped, so these byte sequences occur
// only as structure, never inside model text: a line of an unnamed event
// without them is passed over without being decoded.
const KEYS = [Buffer.from('"usage"'), Buffer.from('"error"'), Buffer.from('"model"')];

/**
 * Reads `text/event-stream` chunks as they pass, without holding them up
 * (the caller hands a chunk on before pushing it here). Per chunk it finds
 * the newlines; a `data:` line is decoded only when its event is named
 * `message_start`, `message_delta` or `error` (two or three per response) —
 * the text deltas in between are skipped without a copy. An event without
 * an `event:` name is judged by the keys above instead. Later usage counts
 * replace earlier ones (message_delta's are cumulative).
 */
export class SseObserver {
  readonly facts: ResponseFacts = { usage: {} };
  private carry: Buffer | undefined;
  /** The rest of the current line is of no interest. */
  private skipping = false;
  /** The current event's name, if its `event:` line came. */
  private event: string | undefined;

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping && this.carry === undefined && this.uninteresting(chunk, start, end))
        this.skipping = true;
      if (this.skipping) {
        if (nl < 0) return;
        this.skipping = false;
      } else if (nl < 0) {
        const rest = chunk.subarray(start);
        if ((this.carry?.length ?? 0) + rest.length > MAX_LINE_BYTES) {
          this.carry = undefined;
          this.skipping = true;
        } else
          this.carry =
            this.carry === undefined ? Buffer.from(rest) : Buffer.concat([this.carry, rest]);
        return;
      } else {
        const piece = chunk.subarray(start, nl);
        this.line(this.carry === undefined ? piece : Buffer.concat([this.carry, piece]));
        this.carry = undefined;
      }
      start = nl + 1;
    }
  }

  /** Whether a line starting at `start` is a data line of an event known
   * not to tell anything (decided from its first bytes, before it ends). */
  private uninteresting(chunk: Buffer, start: number, end: number): boolean {
    if (this.event === undefined || TELLING.has(this.event)) return false;
    return (
      end - start >= DATA.length &&
      chunk.compare(DATA, 0, DATA.length, start, start + DATA.length) === 0
    );
  }

  private line(raw: Buffer): void {
    const line = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, -1) : raw;
    if (line.length === 0) {
      this.event = undefined;
      return;
    }
    if (startsWith(line, EVENT)) {
      this.event = line.subarray(EVENT.length).toString("utf8").trim();
      return;
    }
    if (!startsWith(line, DATA)) return;
    if (
      this.event !== undefined ? !TELLING.has(this.event) : !KEYS.some((k) => line.indexOf(k) >= 0)
    )
      return;
    let data: unknown;
    try {
      data = JSON.parse(line.subarray(DATA.length).toString("utf8"));
    } catch {
      return;
    }
    readEvent(data, this.facts);
  }
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return (
    line.length >= prefix.length && line.compare(prefix, 0, prefix.length, 0, prefix.length) === 0
  );
}

/** The facts of a whole (non-streamed) JSON body: a message or an error. */
export function bodyFacts(text: string): ResponseFacts {
  const facts: ResponseFacts = { usage: {} };
  try {
    readEvent(JSON.parse(text), facts);
  } catch {}
  return facts;
}

/** One parsed event (or a whole message) into `facts`. */
function readEvent(data: unknown, facts: ResponseFacts): void {
  if (typeof data !== "object" || data === null) return;
  const d = data as Record<string, unknown>;
  // message_start carries the message; a plain body is the message itself.
  const message = (d.type === "message_start" ? d.message : d) as Record<string, unknown> | null;
  if (typeof message?.model === "string") facts.model = message.model;
  addUsage(facts.usage, message?.usage);
  if (d.type === "message_delta") addUsage(facts.usage, d.usage);
  if (d.type === "error") {
    const type = (d.error as { type?: unknown } | undefined)?.type;
    facts.error = typeof type === "string" && type !== "" ? type.slice(0, 128) : "error";
  }
}

function addUsage(into: LlmEventUsage, usage: unknown): void {
  if (typeof usage !== "object" || usage === null) return;
  for (const key of USAGE_KEYS) {
    const v = (usage as Record<string, unknown>)[key];
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) into[key] = v;
  }
}
