import { SID_PATTERN } from "../../contract/identifiers.js";
import type { InboxMessage } from "../../contract/messaging.js";
import type { TranscriptItem } from "../../contract/transcripts.js";

// A transcript's `message:session:out` joined to the instance's own record of
// what it carried (DR-0057): the classifier places the item at the call's
// result, once the call came back done; the inbox row of the same send gives
// it the message's mid, which names its receipt. Nothing here decides whether
// the item exists: the transcript says that, so a re-read agrees however long
// ago the row was compacted.

/** The instance's record of messages sent (the inbox store). */
export interface SentRecords {
  sentBetween(
    from: string,
    since: number,
    until: number,
    limit: number,
  ): { to: string; message: InboxMessage }[] | undefined;
}

/** How long before its result a send may have been made: a `post --wait`
 * returns when the receipt comes, minutes later at most. */
const BEFORE_MS = 10 * 60_000;
/** The transcript's clock and the instance's may differ a little. */
const AFTER_MS = 5_000;
/** Rows of the sender looked at for one send at most. */
const LIMIT = 200;

const sidRe = new RegExp(SID_PATTERN);

/** The item with the mid of the send it records, when the record still
 * holds it; the item unchanged otherwise. `sid`: whose transcript it is. */
export function joinSent(
  item: TranscriptItem,
  sid: string,
  records: SentRecords | undefined,
): TranscriptItem {
  if (item.type !== "message:session:out" || item.msg_id !== undefined || records === undefined)
    return item;
  const rows = records.sentBetween(sid, item.at - BEFORE_MS, item.at + AFTER_MS, LIMIT);
  // Newest first: the first that matches is the send nearest the result.
  const found = rows?.find(
    ({ to, message: m }) =>
      m.text === item.text &&
      (item.reply_to === undefined || m.reply_to === item.reply_to) &&
      // The addressee as written: a sid must be the recipient; a prefix or a
      // title was resolved by the CLI and cannot be checked here.
      (item.to === undefined || !sidRe.test(item.to) || item.to === to),
  );
  return found === undefined ? item : { ...item, msg_id: found.message.mid };
}
