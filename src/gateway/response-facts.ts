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
// Quotes inside JSON strings are escaped, so these byte sequences occur
// only as structure, never inside model text: a line without them is passed
// over without being decoded.
const USAGE = Buffer.from('"usage"');
const ERROR = Buffer.from('"error"');
const MODEL = Buffer.from('"model"');

/**
 * Reads `text/event-stream` chunks as they pass. Per chunk it only looks for
 * newlines and, on `data:` lines, for the three keys above; the lines that
 * have one (`message_start`, `message_delta`, `error` — two or three per
 * response) are decoded and parsed. Later usage counts replace earlier ones
 * (message_delta's are cumulative).
 */
export class SseObserver {
  readonly facts: ResponseFacts = { usage: {} };
  private carry: Buffer | undefined;
  private skipping = false;

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      if (this.skipping) this.skipping = false;
      else if (this.carry !== undefined) {
        this.line(Buffer.concat([this.carry, chunk.subarray(start, nl)]));
      } else this.line(chunk.subarray(start, nl));
      this.carry = undefined;
      start = nl + 1;
    }
    if (start >= chunk.length || this.skipping) return;
    const rest = chunk.subarray(start);
    const held = (this.carry?.length ?? 0) + rest.length;
    if (held > MAX_LINE_BYTES) {
      this.carry = undefined;
      this.skipping = true;
    } else
      this.carry = this.carry === undefined ? Buffer.from(rest) : Buffer.concat([this.carry, rest]);
  }

  private line(line: Buffer): void {
    if (line.length < DATA.length || line.compare(DATA, 0, DATA.length, 0, DATA.length) !== 0)
      return;
    if (line.indexOf(USAGE) < 0 && line.indexOf(ERROR) < 0 && line.indexOf(MODEL) < 0) return;
    let data: unknown;
    try {
      data = JSON.parse(line.subarray(DATA.length).toString("utf8"));
    } catch {
      return;
    }
    readEvent(data, this.facts);
  }
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
