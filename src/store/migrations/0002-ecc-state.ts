import type { Migration } from "../migrate.js";

/**
 * ECC's state-store tables (ecc-surfaces §3.2, its migration
 * `001_initial_state_store`), in the instance's own file. ECC's tools keep
 * their own ledger in `schema_migrations`; it is kept too, so a tool that
 * shares this file sees its migrations as applied and does not re-run them.
 */
export const m0002EccState: Migration = {
  version: 2,
  name: "ecc-state",
  up(db) {
    db.exec(`
      CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        adapter_id TEXT NOT NULL,
        harness TEXT NOT NULL,
        state TEXT NOT NULL,
        repo_root TEXT,
        started_at TEXT,
        ended_at TEXT,
        snapshot TEXT NOT NULL CHECK (json_valid(snapshot))
      );
      CREATE INDEX idx_sessions_state_started_at ON sessions (state, started_at DESC);
      CREATE INDEX idx_sessions_started_at ON sessions (started_at DESC);
      CREATE TABLE skill_runs (
        id TEXT PRIMARY KEY,
        skill_id TEXT NOT NULL,
        skill_version TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        task_description TEXT NOT NULL,
        outcome TEXT NOT NULL,
        failure_reason TEXT,
        tokens_used INTEGER,
        duration_ms INTEGER,
        user_feedback TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX idx_skill_runs_session_id_created_at ON skill_runs (session_id, created_at DESC);
      CREATE INDEX idx_skill_runs_created_at ON skill_runs (created_at DESC);
      CREATE INDEX idx_skill_runs_outcome_created_at ON skill_runs (outcome, created_at DESC);
      CREATE TABLE skill_versions (
        skill_id TEXT NOT NULL,
        version TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        amendment_reason TEXT,
        promoted_at TEXT,
        rolled_back_at TEXT,
        PRIMARY KEY (skill_id, version)
      );
      CREATE INDEX idx_skill_versions_promoted_at ON skill_versions (promoted_at DESC);
      CREATE TABLE decisions (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        rationale TEXT NOT NULL,
        alternatives TEXT NOT NULL CHECK (json_valid(alternatives)),
        supersedes TEXT REFERENCES decisions (id) ON DELETE SET NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX idx_decisions_session_id_created_at ON decisions (session_id, created_at DESC);
      CREATE INDEX idx_decisions_status_created_at ON decisions (status, created_at DESC);
      CREATE TABLE install_state (
        target_id TEXT NOT NULL,
        target_root TEXT NOT NULL,
        profile TEXT,
        modules TEXT NOT NULL CHECK (json_valid(modules)),
        operations TEXT NOT NULL CHECK (json_valid(operations)),
        installed_at TEXT NOT NULL,
        source_version TEXT,
        PRIMARY KEY (target_id, target_root)
      );
      CREATE INDEX idx_install_state_installed_at ON install_state (installed_at DESC);
      CREATE TABLE governance_events (
        id TEXT PRIMARY KEY,
        session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL CHECK (json_valid(payload)),
        resolved_at TEXT,
        resolution TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX idx_governance_events_resolved_at_created_at ON governance_events (resolved_at, created_at DESC);
      CREATE INDEX idx_governance_events_session_id_created_at ON governance_events (session_id, created_at DESC);
    `);
    db.prepare(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, '001_initial_state_store', ?)",
    ).run(new Date().toISOString());
  },
};
