import type { InboxMessage, Notification } from "../../contract/messaging.js";
import { fitText } from "../../harness/item-text.js";
import type { DocRow } from "../../store/search-index.js";

// Messages and notifications as rows of the search index (DR-0037): one
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
