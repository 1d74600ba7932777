import type { Migration } from "../migrate.js";

/**
 * The instance's own tables: the inbox (held and delivered messages), the
 * sessions it lost, the KV store, and small facts such as the mid floor.
 */
export const m0001Instance: Migration = {
  version: 1,
  name: "instance",
  up(db) {
    db.exec(`
      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      -- One row per message. 'held' rows are the inbox; 'delivered' and
      -- 'dropped' rows record what happened and are compacted at startup.
      CREATE TABLE inbox (
        counter INTEGER PRIMARY KEY,
        sid TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('held', 'delivered', 'dropped')),
        message TEXT NOT NULL CHECK (json_valid(message)),
        sent_at INTEGER NOT NULL,
        settled_at INTEGER
      );
      CREATE INDEX inbox_held ON inbox (sid, counter) WHERE state = 'held';
      CREATE TABLE last_live (
        sid TEXT PRIMARY KEY,
        row TEXT NOT NULL CHECK (json_valid(row)),
        last_seen_at INTEGER NOT NULL
      );
      CREATE TABLE kv (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT CHECK (value IS NULL OR json_valid(value)),
        updated_at INTEGER NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (ns, key)
      );
    `);
  },
};
