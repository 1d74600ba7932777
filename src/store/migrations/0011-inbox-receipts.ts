import type { Migration } from "../migrate.js";

/** Receipts (DR-0054): when the recipient's transcript showed the message as
 * the model's input (`seen_at`) and when the model answered after it
 * (`read_at`); the route that handed it over last; and, once its transcript
 * moved on without it, why it counts as unseen (`unseen`) and which route it
 * must not be offered by again (`avoid`: `direct` or `lane`). Delivered rows
 * stay about a day for `ccmsg sent` and the console. */
export const m0011InboxReceipts: Migration = {
  version: 11,
  name: "inbox-receipts",
  up(db) {
    db.exec(`
      ALTER TABLE inbox ADD COLUMN seen_at INTEGER;
      ALTER TABLE inbox ADD COLUMN read_at INTEGER;
      ALTER TABLE inbox ADD COLUMN route TEXT;
      ALTER TABLE inbox ADD COLUMN unseen TEXT;
      ALTER TABLE inbox ADD COLUMN avoid TEXT;
    `);
  },
};
