import type { Migration } from "../migrate.js";

/** The person's inbox (DR-0056): every notification raised, kept for a while
 * (bounded in count and age, compacted at start) with its read mark, and the
 * mid a reply to a person answers. Ids are AUTOINCREMENT so a console's ids
 * are never reused after the newest row is dropped. Unread rows and a
 * session's rows have their own indexes: the console counts and lists them. */
export const m0012Notifications: Migration = {
  version: 12,
  name: "notifications",
  up(db) {
    db.exec(`
      CREATE TABLE notifications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        sid TEXT NOT NULL,
        sid_label TEXT NOT NULL,
        text TEXT NOT NULL,
        sent_at INTEGER NOT NULL,
        reply_to TEXT,
        quote TEXT,
        read_at INTEGER
      );
      CREATE INDEX notifications_unread ON notifications (id) WHERE read_at IS NULL;
      CREATE INDEX notifications_sid ON notifications (sid, id);
    `);
  },
};
