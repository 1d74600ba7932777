import {
  DIRECT_DELIVERY_FROM,
  DIRECT_DELIVERY_FROM_MODE,
  DIRECT_DELIVERY_TAG,
  USER_SENDER,
} from "./constants.js";
import type { Mid, Sender } from "./identifiers.js";

/** An InboxMessage as it reaches a session through the harness socket, where
 * the recipient is a model reading one block of text rather than a frame. */
export interface DirectDelivery {
  mid: Mid;
  from: Sender;
  from_label: string;
  reply_to?: Mid;
  /** The sender's text, exactly as sent. */
  text: string;
}

const OPEN = `<${DIRECT_DELIVERY_TAG}`;
const CLOSE = `\n</${DIRECT_DELIVERY_TAG}>`;

/**
 * The line that tells the recipient how to answer. A person (`"user"`) gets no
 * `--to`: `user` is not a sid, addressing it would be a failing send, and the
 * instance turns such a reply into a notification. The trailing `<text>` stays
 * literally as written; the sid is spelled out so nothing must be looked up.
 */
export function directDeliveryReplyLine(mid: Mid, from: Sender): string {
  return from === USER_SENDER
    ? `Reply with: ccmsg reply ${mid} <text>`
    : `Reply with: ccmsg reply ${mid} --to ${from} <text>`;
}

// Attribute values: `&` first so the other entities are not escaped twice.
function escapeAttr(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

// The reverse order: `&amp;` last, so `&amp;lt;` becomes `&lt;` and stops.
function unescapeAttr(value: string): string {
  return value
    .replaceAll("&quot;", '"')
    .replaceAll("&gt;", ">")
    .replaceAll("&lt;", "<")
    .replaceAll("&amp;", "&");
}

/** Render a delivery in the contract's exact wording: attributes in this order,
 * `ccmsg-reply-to` only when present, the body never escaped. */
export function renderDirectDelivery(d: DirectDelivery): string {
  const attrs = [
    ["from", DIRECT_DELIVERY_FROM],
    ["from-name", d.from_label],
    ["from-mode", DIRECT_DELIVERY_FROM_MODE],
    ["ccmsg-mid", d.mid],
    ["ccmsg-from", d.from],
  ];
  if (d.reply_to !== undefined) attrs.push(["ccmsg-reply-to", d.reply_to]);
  const open = `${OPEN}${attrs.map(([k, v]) => ` ${k}="${escapeAttr(v!)}"`).join("")}>`;
  return `${open}\n${d.text}\n\n${directDeliveryReplyLine(d.mid, d.from)}${CLOSE}`;
}

function isNameChar(c: string): boolean {
  return (c >= "a" && c <= "z") || c === "-";
}
function isSpace(c: string | undefined): boolean {
  return c === " " || c === "\t" || c === "\r";
}

/** Scan the opening tag; returns its attributes and where the body starts. */
function scanOpening(text: string): { attrs: Map<string, string>; bodyStart: number } | undefined {
  if (!text.startsWith(OPEN)) return undefined;
  const attrs = new Map<string, string>();
  let i = OPEN.length;
  for (;;) {
    // ` name="value"` repeated, then optional whitespace, `>`, newline.
    if (text[i] === " " && isNameChar(text[i + 1] ?? "")) {
      let j = i + 1;
      while (j < text.length && isNameChar(text[j]!)) j++;
      if (text[j] !== "=" || text[j + 1] !== '"') return undefined;
      const end = text.indexOf('"', j + 2);
      if (end < 0) return undefined;
      attrs.set(text.slice(i + 1, j), unescapeAttr(text.slice(j + 2, end)));
      i = end + 1;
      continue;
    }
    while (isSpace(text[i])) i++;
    if (text[i] !== ">" || text[i + 1] !== "\n") return undefined;
    return { attrs, bodyStart: i + 2 };
  }
}

/**
 * Parse a delivery on the recipient side, or `undefined` when the text is not
 * an envelope. The closing tag is found by its last occurrence, so a body that
 * itself holds the closing tag round-trips; the reply line is removed only if
 * it is exactly the one this delivery would have added.
 */
export function parseDirectDelivery(text: string): DirectDelivery | undefined {
  const open = scanOpening(text);
  if (open === undefined) return undefined;
  const close = text.lastIndexOf(CLOSE);
  if (close < open.bodyStart - 1) return undefined;
  // Only whitespace may follow the closing tag (a harness may add a newline).
  if (text.slice(close + CLOSE.length).trim() !== "") return undefined;
  const mid = open.attrs.get("ccmsg-mid");
  const from = open.attrs.get("ccmsg-from");
  const fromLabel = open.attrs.get("from-name");
  if (mid === undefined || from === undefined || fromLabel === undefined) return undefined;
  // The body of an empty text meets the closing tag's newline directly.
  let body = close >= open.bodyStart ? text.slice(open.bodyStart, close) : "";
  const tail = `\n\n${directDeliveryReplyLine(mid, from)}`;
  if (body.endsWith(tail)) body = body.slice(0, body.length - tail.length);
  const out: DirectDelivery = { mid, from, from_label: fromLabel, text: body };
  const replyTo = open.attrs.get("ccmsg-reply-to");
  if (replyTo !== undefined) out.reply_to = replyTo;
  return out;
}
