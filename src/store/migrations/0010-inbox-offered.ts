import type { Migration } from "../migrate.js";

/** When a held message went in flight (DR-0050): route (a) sets it before the
 * harness gets the message and clears it when it did not get through; a live
 * frame waiting for a subscriber's socket is stored with it. Rows in flight
 * are neither counted nor dropped by the per-recipient limit. A row still
 * marked at start was in flight when the instance died: its session's
 * transcript says whether it arrived. */
export const m0010InboxOffered: Migration = {
  version: 10,
  name: "inbox-offered",
  up(db) {
    db.exec(`
      ALTER TABLE inbox ADD COLUMN offered_at INTEGER;
      CREATE INDEX inbox_offered ON inbox (counter) WHERE offered_at IS NOT NULL AND state = 'held';
    `);
  },
};
