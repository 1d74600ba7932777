import type { Migration } from "../migrate.js";

/** The last run of each board sync (`ccmsg board sync github|linear`, and the
 * instance's interval runs): when, whether it worked, what it changed, and —
 * from the last run that worked — the facts the HUD shows (queue counts,
 * stale-salvage PRs, Linear health). A failed run replaces the outcome but
 * keeps those facts, dated by `facts_at`. */
export const m0006SyncRuns: Migration = {
  version: 6,
  name: "sync-runs",
  up(db) {
    db.exec(`
      CREATE TABLE sync_runs (
        source TEXT PRIMARY KEY CHECK (source IN ('github', 'linear')),
        target TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
        message TEXT NOT NULL,
        counts TEXT NOT NULL CHECK (json_valid(counts)),
        facts TEXT CHECK (facts IS NULL OR json_valid(facts)),
        facts_at TEXT
      );
    `);
  },
};
