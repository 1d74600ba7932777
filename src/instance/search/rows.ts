import type { AttentionItem } from "../../contract/attention.js";
import type { InboxMessage, Notification } from "../../contract/messaging.js";
import { fitText } from "../../harness/item-text.js";
import type { DocRow } from "../../store/search-index.js";

// Messages, notifications and attention items as rows of the search index (DR-0037): one
// place, for what the instance hands the index as it happens and for what a
// new index reads back from the store.

/** A message: under its recipient, from its sender (a sid or `user`). */
export function messageRow(to: string, m: InboxMessage): DocRow {
  return {
    sid: to,
    peer: m.from,
    item: m.mid,
    type: "message",
    at: m.sent_at,
    text: fitText(m.text),
  };
}

/** A notification (`notify_send`, `say_post`): under the session it is about. */
export function notificationRow(n: Notification): DocRow {
  return {
    sid: n.sid,
    item: `${n.sid}@${n.sent_at}`,
    type: "notification",
    at: n.sent_at,
    text: fitText(n.text),
  };
}

/** An ended attention item (DR-0062): under its session, as its record
 * reads — the tool, what it asked, how it ended and who decided — so a
 * search for the tool or the command finds it. */
export function attentionRow(i: AttentionItem): DocRow {
  const by = i.decided_by;
  const who =
    by === undefined
      ? ""
      : ` by ${by.role === "session" ? `session ${by.sid ?? ""}` : "the person"}${by.via === undefined ? "" : ` (${by.via})`} on ${by.instance}`;
  const what =
    i.kind === "question" ? (i.questions ?? []).map((q) => q.question).join(" ") : i.input;
  const end = (i.end ?? "pending").replaceAll("_", " ");
  const message = i.message === undefined ? "" : `: ${i.message}`;
  return {
    sid: i.sid,
    item: `attention:${i.instance}:${i.id}`,
    type: `attention:${i.kind}`,
    at: i.ended_at ?? i.asked_at,
    text: fitText(`${i.tool} ${what} — ${end}${who}${message}`),
  };
}
