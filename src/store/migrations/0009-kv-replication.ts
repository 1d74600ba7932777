import type { Migration } from "../migrate.js";

/**
 * KV replication across the mesh (DR-0049). Every stored version gets a place
 * in this replica's change sequence (`seq`: a peer pulls everything past the
 * last `seq` it holds), the local time it was stored (`stored_at`: a tombstone
 * is purged 7 days after it, not after its `updated_at`, which a writer may
 * set in the past) and the replica it came from (`origin`: NULL for a local
 * write; never sent back there). `kv_marks` is, per peer, how far into that
 * peer's sequence this store holds everything, valid for one life of the
 * peer's store (`replica`). Rows already held join the sequence in rowid order
 * so that the first link after the upgrade sends them. `kv_life.replica`
 * names this life of the store: a peer's marks for an older life (a wiped
 * state dir) start again from 0; `seq_floor` keeps a purge from freeing the
 * last place of the sequence for reuse.
 */
export const m0009KvReplication: Migration = {
  version: 9,
  name: "kv-replication",
  up(db) {
    db.exec(`
      ALTER TABLE kv ADD COLUMN seq INTEGER;
      ALTER TABLE kv ADD COLUMN stored_at INTEGER;
      ALTER TABLE kv ADD COLUMN origin TEXT;
      UPDATE kv SET seq = rowid, stored_at = updated_at;
      CREATE UNIQUE INDEX kv_seq ON kv (seq);
      CREATE INDEX kv_tombstones ON kv (stored_at) WHERE deleted = 1;
      CREATE TABLE kv_marks (
        peer TEXT PRIMARY KEY,
        replica TEXT NOT NULL,
        seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE kv_life (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        replica TEXT NOT NULL,
        seq_floor INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO kv_life (id, replica) VALUES (1, lower(hex(randomblob(16))));
    `);
  },
};
