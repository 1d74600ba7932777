import type { Migration } from "../migrate.js";

/** Results of `ccmsg check run`: the local checks a repository declares, as
 * the HUD's `checks.local` reports them. */
export const m0004CheckRuns: Migration = {
  version: 4,
  name: "check-runs",
  up(db) {
    db.exec(`
      CREATE TABLE check_runs (
        id INTEGER PRIMARY KEY,
        repo_root TEXT NOT NULL,
        name TEXT NOT NULL,
        command TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'error')),
        exit_code INTEGER,
        duration_ms INTEGER NOT NULL,
        output_tail TEXT NOT NULL,
        finished_at TEXT NOT NULL
      );
      CREATE INDEX idx_check_runs_repo_name ON check_runs (repo_root, name, id DESC);
    `);
  },
};
