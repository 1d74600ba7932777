import type { TranscriptHarness } from "./transcript-files.js";

// What a transcript record says about messages reaching the model (DR-0054).
// ccmsg's envelope carries `ccmsg-mid="<mid>"` on every route; a record the
// harness writes as the model's input that holds it is the evidence the model
// saw the message. Only input records count: a model quoting a mid in its own
// output proves nothing, and bookkeeping (a `queue-operation` enqueue, a
// prompt snapshot) is not what the model was sent.

/** The substring every envelope carries: a line without it is not parsed
 * for mids at all. */
export const MID_MARK = "ccmsg-mid=";

/** What one record says. `input`: the model's input, with the mids it
 * carries (often none); `answer`: the model's output, `idle` when it ended
 * its turn (no tool call pending). */
export type Evidence =
  | { kind: "input"; at: number; mids: string[] }
  | { kind: "answer"; at: number; idle: boolean };

const MID = "([0-9a-f]{32}/[0-9]{1,31})";
/** A mid as the model is shown it: the envelope's attribute on every
 * delivery route; and, in a tool's output, `ccmsg inbox`'s `[<mid>]` line or
 * a `"mid": "<mid>"` member (`ccmsg inbox --json`, the MCP inbox tool), which
 * take held messages too. In a JSONL record quotes are escaped (`\"`). */
const MID_RE = new RegExp(
  `ccmsg-mid=\\\\?"${MID}\\\\?"|\\[${MID}\\]|\\\\?"mid\\\\?":\\s*\\\\?"${MID}\\\\?"`,
  "g",
);
/** Cheap tests before the expression runs: an envelope, or a mid's shape. */
const MID_SHAPE = /[0-9a-f]{32}\/[0-9]/;

/** The evidence in one transcript line (`record` is its parsed JSON), or
 * undefined for a record that is neither the model's input nor its output. */
export function receiptEvidence(
  harness: TranscriptHarness,
  text: string,
  record: Record<string, unknown> | undefined,
): Evidence | undefined {
  if (record === undefined) return undefined;
  const kind = harness === "codex" ? codexKind(record) : claudeKind(record);
  if (kind === undefined) return undefined;
  const at = timeOf(record.timestamp);
  if (kind === "input")
    return {
      kind,
      at,
      mids: text.includes(MID_MARK) || MID_SHAPE.test(text) ? midsIn(text) : [],
    };
  return { kind: "answer", at, idle: kind === "idle" };
}

function midsIn(text: string): string[] {
  return [...new Set([...text.matchAll(MID_RE)].map((m) => (m[1] ?? m[2] ?? m[3])!))];
}

type Kind = "input" | "busy" | "idle";

/** Claude Code: `user` records (a prompt, a message through the messaging
 * socket, Stop-hook feedback, tool results) and the attachments it sends
 * with a request (hook context, a prompt queued while the model worked) are
 * input; `assistant` records are output. */
function claudeKind(r: Record<string, unknown>): Kind | undefined {
  if (r.type === "user") return "input";
  if (r.type === "attachment") {
    const a = r.attachment as Record<string, unknown> | undefined;
    const t = typeof a?.type === "string" ? a.type : "";
    return t.startsWith("hook_") || t === "queued_command" ? "input" : undefined;
  }
  if (r.type === "assistant") {
    const m = r.message as Record<string, unknown> | undefined;
    const stop = m?.stop_reason;
    return stop === "end_turn" || stop === "stop_sequence" || stop === "max_tokens"
      ? "idle"
      : "busy";
  }
  return undefined;
}

/** Codex rollouts: `response_item`s are what went to and came from the
 * model — a `user` message or a tool's output in, anything else out. */
function codexKind(r: Record<string, unknown>): Kind | undefined {
  if (r.type !== "response_item") return undefined;
  const p = r.payload as Record<string, unknown> | undefined;
  if (p === undefined) return undefined;
  if (p.type === "message") return p.role === "assistant" ? "idle" : "input";
  if (p.type === "function_call_output" || p.type === "custom_tool_call_output") return "input";
  return "busy";
}

function timeOf(v: unknown): number {
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : Date.now();
}

/** What a transcript told about receipts, in file order, for the instance to
 * match against the messages it delivered. `turn`: the model answered a
 * request whose inputs were written up to `inputsAt` (a request formed then:
 * a message delivered well before it and not among its mids was lost on the
 * way). `state`: whether the session's model is between turns now. */
export type ReceiptEvent =
  | { kind: "seen"; sid: string; mid: string; at: number }
  | { kind: "read"; sid: string; mid: string; at: number }
  | { kind: "turn"; sid: string; inputsAt: number; at: number }
  | { kind: "state"; sid: string; idle: boolean; at: number };

/** Records older than this tell nothing a receipt still waits for. */
const RELEVANT_MS = 24 * 3600 * 1000;

/**
 * Follows one session's transcript for receipts (its main file only: a
 * message is delivered to the session, not to its sub-agents). Fed every
 * line once, in order; state lives as long as the reader keeps the file.
 */
export class ReceiptScan {
  /** Mids seen since the model last answered: read at its next answer. */
  private unread: string[] = [];
  /** When the newest input since the last answer was written. */
  private inputsAt: number | undefined;

  constructor(
    private readonly harness: TranscriptHarness,
    private readonly sid: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** One line; events are appended to `out`. */
  line(text: string, record: Record<string, unknown> | undefined, out: ReceiptEvent[]): void {
    const e = receiptEvidence(this.harness, text, record);
    if (e === undefined || e.at < this.now() - RELEVANT_MS) return;
    const { sid } = this;
    if (e.kind === "input") {
      this.inputsAt = Math.max(this.inputsAt ?? e.at, e.at);
      for (const mid of e.mids) {
        out.push({ kind: "seen", sid, mid, at: e.at });
        this.unread.push(mid);
      }
      return;
    }
    for (const mid of this.unread) out.push({ kind: "read", sid, mid, at: e.at });
    this.unread = [];
    if (this.inputsAt !== undefined)
      out.push({ kind: "turn", sid, inputsAt: this.inputsAt, at: e.at });
    this.inputsAt = undefined;
    out.push({ kind: "state", sid, idle: e.idle, at: e.at });
  }
}

/** Events of one batch with repeated `state`s folded: only each session's
 * last state counts. */
export function foldStates(events: ReceiptEvent[]): ReceiptEvent[] {
  const last = new Map<string, number>();
  events.forEach((e, i) => {
    if (e.kind === "state") last.set(e.sid, i);
  });
  return events.filter((e, i) => e.kind !== "state" || last.get(e.sid) === i);
}
