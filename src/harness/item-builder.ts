import {
  type DirectDelivery,
  directDeliveryReplyLine,
  parseDirectDelivery,
} from "../contract/direct-delivery.js";
import type { PairSide } from "./tool-pairs.js";
import type { TranscriptLine } from "./transcript-lines.js";

// The pieces both harness classifiers build items with: one builder per
// record (ids, source, instant, turn), and small readers for the loosely
// typed values a harness writes. A value of the wrong type is treated as
// absent, never trusted: the contract's shapes must hold whatever the file says.

/** An item as a classifier makes it, before call/result links are applied. */
export interface ItemDraft {
  id: string;
  uuid: string;
  source: { offset: number; bytes: number };
  type: string;
  at: number;
  turn?: number;
  [field: string]: unknown;
}

export interface Classified {
  item: ItemDraft;
  /** The call/result pair the item is one side of (./tool-pairs.ts). */
  pair?: PairSide;
}

/** The calls seen so far in this transcript. */
export interface CallBook {
  /** The tool name (as its item type spells it: `Agent` for `Task`) of the
   * call `toolUseId`, if that call's record lies before `offset`. */
  toolOf(toolUseId: string, offset: number): string | undefined;
}

/**
 * Makes the items of one record: `id` = `<uuid>:<index>` in the order they
 * are added, all sharing the record's source range and instant. A record
 * without a usable uuid (Codex never writes one; a Claude record may lack it)
 * is named `@<byte offset>`: the file is append-only, so that name is as
 * stable as the record's place in it (a replaced file starts over anyway).
 */
export class ItemBuilder {
  readonly out: Classified[] = [];
  readonly uuid: string;
  private index = 0;
  private unknownAdded = false;

  constructor(
    readonly line: TranscriptLine,
    uuid: unknown,
    readonly at: number,
    private readonly turn: () => number,
  ) {
    this.uuid = usableUuid(uuid) ?? `@${line.offset}`;
  }

  add(type: string, fields: Record<string, unknown>, pair?: PairSide): ItemDraft {
    const item: ItemDraft = {
      id: `${this.uuid}:${this.index++}`,
      uuid: this.uuid,
      source: { offset: this.line.offset, bytes: this.line.bytes },
      type,
      at: this.at,
      turn: this.turn(),
    };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) item[k] = v;
    this.out.push(pair === undefined ? { item } : { item, pair });
    return item;
  }

  /** The record as `system:unknown` — once per record however many of its
   * parts could not be placed. */
  unknown(record: Record<string, unknown>): void {
    if (this.unknownAdded) return;
    this.unknownAdded = true;
    this.add("system:unknown", { record });
  }
}

/** A uuid usable inside an item id (no `:`, no whitespace), or undefined. */
function usableUuid(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" && !/[\s:]/.test(value) ? value : undefined;
}

// --- value readers ---

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Json | undefined {
  return isObject(v) ? v : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A non-empty string (the contract's `NonEmpty`). */
export function id(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** An integer ≥ 0 (a count or a duration). */
export function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

export function flag(v: unknown): boolean | undefined {
  return typeof v === "boolean" ? v : undefined;
}

/** Milliseconds of an ISO-8601 timestamp (or of a count of them), or undefined. */
export function instant(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== "string") return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Lines in a text (a trailing newline ends the last line, adds none). */
export function lineCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** The segment a harness coined, made fit for a type name. */
export function segment(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_.-]/g, "_");
  return s === "" ? "unknown" : s;
}

/** The text of a content value: a string, or the `text` of its text blocks. */
export function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === "string") parts.push(block);
    else if (isObject(block) && typeof block.text === "string") parts.push(block.text);
  }
  return parts.length === 0 ? undefined : parts.join("\n");
}

/** The body of `<tag>…</tag>` in `text`, if present. */
export function tagBody(text: string, tag: string): string | undefined {
  const open = `<${tag}>`;
  const start = text.indexOf(open);
  if (start < 0) return undefined;
  const end = text.indexOf(`</${tag}>`, start + open.length);
  return text.slice(start + open.length, end < 0 ? undefined : end);
}

// --- ccmsg sends made through a tool ---

/** A send a tool call asks ccmsg to make: what `message:session:out` says
 * once the call's result shows it was carried (never at the call itself: a
 * call the person denies, or that fails, carried nothing). */
export interface SendDraft {
  to?: string;
  text: string;
  reply_to?: string;
}

/** Sends asked for whose result has not come back, by tool_use_id. Kept in
 * the classifier's state (so a re-read from a checkpoint agrees); a call that
 * never gets a result is let go past this many. */
export const PENDING_SENDS_MAX = 64;

/** Remember a send until its call's result, keeping the newest few. */
export function holdSend(
  pending: Map<string, SendDraft>,
  toolUseId: string,
  send: SendDraft | undefined,
): void {
  if (send === undefined) return;
  pending.set(toolUseId, send);
  if (pending.size > PENDING_SENDS_MAX) pending.delete(pending.keys().next().value!);
}

/** What ccmsg answered on its stdout (`cli/messages.ts`): `delivered`, or
 * `held (<reason>)`, in words or as `--json`. Undefined when the output says
 * neither (a reply that became a notification, output sent elsewhere). */
export function sendAck(
  stdout: string | undefined,
): { delivered: boolean; reason?: string } | undefined {
  if (stdout === undefined) return undefined;
  const line = stdout.trimStart().split("\n", 1)[0]!.trim();
  if (line.startsWith("{")) {
    try {
      const r: unknown = JSON.parse(line);
      if (isObject(r) && typeof r.delivered === "boolean")
        return {
          delivered: r.delivered,
          ...(typeof r.reason === "string" ? { reason: r.reason } : {}),
        };
    } catch {}
    return undefined;
  }
  if (line === "delivered") return { delivered: true };
  const held = /^held \(([a-z_]+)\)$/.exec(line);
  return held === null ? undefined : { delivered: false, reason: held[1]! };
}

/** A `message:session:out` read from a shell command: `ccmsg post <sid>
 * <text…>` or `ccmsg reply <mid> [--to <sid>] <text…>` at the start of it
 * (also run by an interpreter, as the plugin's hooks do: `node …/ccmsg.js`). */
export function shellSend(command: string): SendDraft | undefined {
  if (!/\b(post|reply)\b/.test(command) || !command.includes("ccmsg")) return undefined;
  const words = shellWords(command.trimStart());
  if (words === undefined) return undefined;
  // `ccmsg …`, or an interpreter running it: `node …/ccmsg.js …`.
  const at = words.findIndex((w) => /(^|\/)ccmsg(\.js)?$/.test(w));
  if (at < 0 || at > 1) return undefined;
  const [verb, target, ...rest] = words.slice(at + 1);
  if ((verb !== "post" && verb !== "reply") || target === undefined) return undefined;
  let to: string | undefined;
  const text: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (w === "--to" && i + 1 < rest.length) to = rest[++i];
    else if (w.startsWith("--to=")) to = w.slice(5);
    else if (w === "--sid" || w === "--state-dir") i++;
    else if (w.startsWith("--")) continue;
    else text.push(w);
  }
  if (verb === "post") return { to: target, text: text.join(" ") };
  return { ...(to === undefined ? {} : { to }), text: text.join(" "), reply_to: target };
}

/** POSIX-ish word splitting: quotes and backslashes; stops at the first
 * unquoted operator (`;`, `&`, `|`, newline). Undefined when unbalanced. */
function shellWords(text: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let acc = "";
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length && '"\\$`'.includes(text[j + 1]!)) j++;
        acc += text[j];
      }
      if (j >= text.length) return undefined;
      word = (word ?? "") + acc;
      i = j;
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text[++i];
    } else if (c === " " || c === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === ";" || c === "&" || c === "|" || c === "\n") {
      break;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** A ccmsg MCP send (`…ccmsg…__send` / `__reply`) as `message:session:out`. */
export function mcpSend(tool: string, input: Json): SendDraft | undefined {
  const m = /^mcp__.*ccmsg.*__(send|reply)$/.exec(tool);
  if (m === null) return undefined;
  const text = str(input.text) ?? "";
  const to = id(input.to);
  const mid = id(input.mid);
  return {
    ...(to === undefined ? {} : { to }),
    text,
    ...(m[1] === "reply" && mid !== undefined ? { reply_to: mid } : {}),
  };
}

// --- deliveries inside a hook's output ---

/** A ccmsg delivery as the fields of its `message:session:in` (contract
 * §10.5): the body, the sender, the message. */
export function deliveredFields(d: DirectDelivery): Record<string, unknown> {
  return { text: d.text, from: d.from, msg_id: d.mid };
}

const OPEN = "<cross-session-message ";
const CLOSE = "\n</cross-session-message>";

/** The ccmsg deliveries a hook handed the model (`ccmsg inbox --hook` joins
 * rendered envelopes with blank lines, and may end with a note). A block ends
 * at the first closing tag that follows its own reply line, so a body holding
 * the tag or a blank line stays whole; text around blocks is not a delivery. */
export function deliveriesIn(text: string): DirectDelivery[] {
  const out: DirectDelivery[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf(OPEN, from);
    if (start < 0) return out;
    from = start + OPEN.length;
    if (start > 0 && !text.startsWith("\n\n", start - 2)) continue;
    // The first closing tag that ends a block (text end or a blank line).
    for (
      let close = text.indexOf(CLOSE, from);
      close >= 0;
      close = text.indexOf(CLOSE, close + 1)
    ) {
      const end = close + CLOSE.length;
      if (end !== text.length && !text.startsWith("\n\n", end)) continue;
      const d = parseDirectDelivery(text.slice(start, end));
      const replied =
        d !== undefined &&
        text.slice(start, close).endsWith(`\n\n${directDeliveryReplyLine(d.mid, d.from)}`);
      if (d !== undefined && replied) {
        out.push(d);
        from = end;
        break;
      }
    }
  }
}

/** Whose position `in` / `out` are read from: the session, or one agent. */
export interface Subject {
  agentId?: string;
}

/** What a classifier carries from one line to the next. */
export interface ClassifierState {
  turn: number;
  at: number;
  /** The API message being streamed, and the blocks of it already seen. */
  message?: string;
  seen?: string[];
  /** The last slash command, for the output record that follows it. */
  slash?: string;
  /** Codex: whether the session's first `session_meta` was seen. */
  started?: boolean;
  /** Sends whose call's result is still to come ([tool_use_id, send]). */
  sends?: [string, SendDraft][];
}

export interface TranscriptClassifier {
  /** The items of one complete line, in the order they are numbered. */
  classify(line: TranscriptLine): Classified[];
  /** Lines that were not a JSON object (torn, foreign, oversized). */
  readonly parseErrors: number;
  save(): ClassifierState;
  restore(state: ClassifierState): void;
}
