import type { Migration } from "../migrate.js";

/** Delivered rows are kept a day for receipts (DR-0054): a transcript's send
 * is matched to its row by the time it was sent (DR-0057), which without an
 * index read every row kept — for each message out of a transcript read. */
export const m0013InboxSentAt: Migration = {
  version: 13,
  name: "inbox-sent-at",
  up(db) {
    db.exec("CREATE INDEX inbox_sent_at ON inbox (sent_at)");
  },
};
