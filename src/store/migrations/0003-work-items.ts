import type { Migration } from "../migrate.js";

/** ECC's work board (its migration `002_work_items`), plus an index on
 * `updated_at` alone: the board lists and claims newest first, and counting
 * and listing must not cost more as the table grows. */
export const m0003WorkItems: Migration = {
  version: 3,
  name: "work-items",
  up(db) {
    db.exec(`
      CREATE TABLE work_items (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        source_id TEXT,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        priority TEXT,
        url TEXT,
        owner TEXT,
        repo_root TEXT,
        session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
        metadata TEXT NOT NULL CHECK (json_valid(metadata)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX idx_work_items_status_updated_at ON work_items (status, updated_at DESC);
      CREATE INDEX idx_work_items_source_source_id ON work_items (source, source_id);
      CREATE INDEX idx_work_items_session_id_updated_at ON work_items (session_id, updated_at DESC);
      CREATE INDEX idx_work_items_updated_at ON work_items (updated_at DESC, id DESC);
    `);
    db.prepare(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (2, '002_work_items', ?)",
    ).run(new Date().toISOString());
  },
};
