import type { Migration } from "../migrate.js";

/** When route (a) began handing a held message to its harness (DR-0050): set
 * before the exchange, cleared when it did not get through. A row still
 * marked at start was in the harness's hands when the instance died — its
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
