import type { Migration } from "../migrate.js";

/** Person authentication (contract §9.4, DR-0044): registered passkeys and
 * token families, kept apart from the KV store, where a person could read or
 * write them. Token values are never stored: only SHA-256 hashes (hex). A
 * credential tombstone (`deleted_at`) is kept forever; a dead family
 * (`dead_at`) refuses every later use of its tokens. */
export const m0008AuthRecords: Migration = {
  version: 8,
  name: "auth-records",
  up(db) {
    db.exec(`
      CREATE TABLE auth_subjects (
        sub TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE auth_credentials (
        credential_id TEXT PRIMARY KEY,
        sub TEXT NOT NULL,
        public_key TEXT NOT NULL,
        user_handle TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        webui TEXT NOT NULL,
        rp_id TEXT NOT NULL,
        sign_count INTEGER NOT NULL DEFAULT 0,
        backup_eligible INTEGER,
        backup_state INTEGER,
        issued_label TEXT,
        device_label TEXT,
        registered_at INTEGER NOT NULL,
        registered_ip TEXT,
        registered_user_agent TEXT,
        last_used_at INTEGER,
        last_used_ip TEXT,
        last_used_user_agent TEXT,
        deleted_at INTEGER
      ) WITHOUT ROWID;
      CREATE INDEX idx_auth_credentials_sub ON auth_credentials (sub);
      CREATE TABLE auth_families (
        id TEXT PRIMARY KEY,
        sub TEXT NOT NULL,
        iss TEXT NOT NULL,
        webui TEXT NOT NULL,
        refresh_hash TEXT NOT NULL,
        refresh_expires_at INTEGER NOT NULL,
        previous_hash TEXT,
        previous_expires_at INTEGER,
        previous_grace_used INTEGER NOT NULL DEFAULT 0,
        last_refresh TEXT,
        created_at INTEGER NOT NULL,
        dead_at INTEGER,
        dead_until INTEGER
      ) WITHOUT ROWID;
      CREATE INDEX idx_auth_families_sub ON auth_families (sub);
      CREATE UNIQUE INDEX idx_auth_families_refresh ON auth_families (refresh_hash);
      CREATE TABLE auth_retired (
        hash TEXT PRIMARY KEY,
        family_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE auth_access (
        hash TEXT PRIMARY KEY,
        family_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX idx_auth_access_family ON auth_access (family_id);
    `);
  },
};
