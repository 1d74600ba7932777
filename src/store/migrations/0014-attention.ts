import type { Migration } from "../migrate.js";

/** The attention queue (DR-0062): what a session waits on a person for, and
 * how it ended. The item beyond its keys is one JSON body (its shape is the
 * contract's `AttentionItem`, read and written whole); pending items have
 * their own index, the console lists them on every greeting. */
export const m0014Attention: Migration = {
  version: 14,
  name: "attention",
  up(db) {
    db.exec(`
      CREATE TABLE attention (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        sid TEXT NOT NULL,
        asked_at INTEGER NOT NULL,
        ended_at INTEGER,
        body TEXT NOT NULL
      );
      CREATE INDEX attention_pending ON attention (id) WHERE ended_at IS NULL;
      CREATE INDEX attention_sid ON attention (sid, id);
    `);
  },
};
