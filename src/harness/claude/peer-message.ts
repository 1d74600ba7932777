import { DIRECT_DELIVERY_TAG } from "../../contract/constants.js";
import { parseDirectDelivery } from "../../contract/direct-delivery.js";

// A message from another session as Claude Code records it (harness.md §11.1).
// ccmsg's envelope arrives in one of three wrappings: bare (a hook, or a
// message queued while the model worked: `attachment.queued_command`), or after
// one of Claude Code's own introductions and followed by its paragraph telling
// the model a peer is not the user (a message its socket took while idle). Only
// the sender's words and who sent them are kept: the wrapping is the harness's.

/** What becomes a `message:session:in` (contract §10.5). */
export interface PeerMessage {
  text: string;
  /** The sender: a sid for ccmsg's envelope, else the session id or address
   * Claude Code's own envelope names. */
  from?: string;
  msg_id?: string;
}

/** The lines Claude Code 2.1.328 puts before a peer's envelope (its
 * `Another Claude session sent a message` family, each ending the line). */
const INTROS = [
  "Another Claude session sent a message:\n",
  "Another Claude session sent a message while you were working:\n",
  "A peer session sent a message while you were working:\n",
];

const OPEN = `<${DIRECT_DELIVERY_TAG}`;
const CLOSE = `\n</${DIRECT_DELIVERY_TAG}>`;
const OPENING = new RegExp(`^${OPEN}((?: [a-z][a-z-]*="[^"]*")*)[ \\t]*>\\n`);
const ATTR = / ([a-z][a-z-]*)="([^"]*)"/g;

/**
 * The message `text` carries, or undefined when it is not one. `peer` says the
 * harness marked the record as a peer's (`origin.kind: "peer"`); with that mark
 * or an introduction, what follows the envelope is the harness's advice and an
 * envelope ccmsg did not write (Claude Code's own peers) still counts. Without
 * either, only an exact ccmsg envelope does: a person may paste one.
 */
export function peerMessage(text: string, peer: boolean): PeerMessage | undefined {
  const intro = INTROS.find((i) => text.startsWith(i));
  const rest = intro === undefined ? text : text.slice(intro.length);
  if (!rest.startsWith(OPEN)) return undefined;
  const marked = peer || intro !== undefined;
  // The last closing tag: a body may hold the tag, the harness's advice does not.
  const close = rest.lastIndexOf(CLOSE);
  if (close < 0) return undefined;
  const envelope = rest.slice(0, close + CLOSE.length);
  if (!marked && rest.slice(envelope.length).trim() !== "") return undefined;
  const d = parseDirectDelivery(envelope);
  if (d !== undefined) return { text: d.text, from: d.from, msg_id: d.mid };
  return marked ? foreign(envelope, close) : undefined;
}

/** An envelope ccmsg did not write: its body and whatever addresses the sender. */
function foreign(envelope: string, close: number): PeerMessage | undefined {
  const m = OPENING.exec(envelope);
  if (m === null) return undefined;
  const attrs = new Map<string, string>();
  for (const [, k, v] of m[1]!.matchAll(ATTR)) attrs.set(k!, attrValue(v!));
  // An empty body: the opening's newline is the closing tag's.
  const text = m[0].length > close ? "" : envelope.slice(m[0].length, close);
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  const out: PeerMessage = { text };
  const from = nonEmpty(attrs.get("ccmsg-from") ?? attrs.get("from-session") ?? attrs.get("from"));
  const mid = nonEmpty(attrs.get("ccmsg-mid"));
  if (from !== undefined) out.from = from;
  if (mid !== undefined) out.msg_id = mid;
  return out;
}

function attrValue(v: string): string {
  return v
    .replaceAll("&quot;", '"')
    .replaceAll("&gt;", ">")
    .replaceAll("&lt;", "<")
    .replaceAll("&amp;", "&");
}
