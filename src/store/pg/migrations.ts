import type { PoolClient } from "pg";
import { contractError } from "../../contract/errors.js";

/** One schema step of the PostgreSQL board; versions only go up. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The team board's tables. Columns and timestamps (ISO text) are the SQLite
 * board's, so items compare and sort the same way on both; metadata is
 * `jsonb`. There is no `sessions` table: sessions belong to each instance,
 * so `session_id` is kept as given, without a foreign key.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "001_work_items",
    sql: `
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
        session_id TEXT,
        metadata JSONB NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX idx_work_items_status_updated_at ON work_items (status, updated_at DESC);
      CREATE INDEX idx_work_items_source_source_id ON work_items (source, source_id);
      CREATE INDEX idx_work_items_updated_at ON work_items (updated_at DESC, id DESC);
      -- Every committed change is announced to the listening instances
      -- (delivered at commit; several changes of one row in one transaction
      -- arrive once).
      CREATE FUNCTION ccmsg_work_items_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('ccmsg_work_items', NEW.id);
        RETURN NEW;
      END $$;
      CREATE TRIGGER work_items_notify AFTER INSERT OR UPDATE ON work_items
        FOR EACH ROW EXECUTE FUNCTION ccmsg_work_items_notify();`,
  },
  {
    version: 2,
    name: "002_check_runs",
    sql: `
      CREATE TABLE check_runs (
        id BIGSERIAL PRIMARY KEY,
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
      -- A run is one check finishing at one instant: copying a board twice
      -- (store migrate) must not duplicate it.
      CREATE UNIQUE INDEX idx_check_runs_once ON check_runs (repo_root, name, finished_at);`,
  },
  {
    version: 3,
    name: "003_kv",
    sql: `
      -- KV (contract §11) shared by the instances: the SQLite table's
      -- columns. The value is the JSON text as written (not jsonb, which
      -- would normalise it): equal stamps are decided on its UTF-8 bytes.
      -- Tombstones are rows with deleted = true and no value.
      CREATE TABLE kv (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT,
        updated_at BIGINT NOT NULL,
        deleted BOOLEAN NOT NULL DEFAULT false,
        PRIMARY KEY (ns, key),
        CHECK (deleted = (value IS NULL))
      );
      -- Every committed change, as "ns<TAB>key<TAB>updated_at" (neither a
      -- namespace nor a key holds a control character); listeners read the
      -- row itself, so the payload stays far below NOTIFY's 8000 bytes.
      CREATE FUNCTION ccmsg_kv_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('ccmsg_kv', NEW.ns || chr(9) || NEW.key || chr(9) || NEW.updated_at);
        RETURN NEW;
      END $$;
      CREATE TRIGGER kv_notify AFTER INSERT OR UPDATE ON kv
        FOR EACH ROW EXECUTE FUNCTION ccmsg_kv_notify();`,
  },
];

/** Serialises first opens across instances: any 64-bit key nobody else uses. */
const MIGRATION_LOCK = 0x63636d7367; // "ccmsg"

/**
 * Bring the database to the newest version, recorded row by row in
 * `schema_migrations` as on SQLite. A current database is only read. Pending
 * steps run in one transaction under an advisory lock, and the applied set is
 * read inside it, so instances opening a fresh database at once apply each
 * step exactly once.
 */
export async function migratePg(client: PoolClient): Promise<number> {
  const latest = PG_MIGRATIONS.at(-1)!.version;
  if ((await applied(client)) === latest) return latest;
  await client.query("BEGIN");
  try {
    // Connections carry the busy timeout as their lock_timeout; a first open
    // waits for another's migration however long it takes.
    await client.query("SET LOCAL lock_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    const v = await applied(client);
    for (const m of PG_MIGRATIONS) {
      if (m.version <= v) continue;
      await client.query(m.sql);
      await client.query(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
        [m.version, m.name, new Date().toISOString()],
      );
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
  return latest;
}

/** The newest applied version (0 for an empty database); refuses a database
 * a newer ccmsg migrated. */
async function applied(client: PoolClient): Promise<number> {
  const exists = await client.query("SELECT to_regclass('schema_migrations') AS t");
  if (exists.rows[0].t === null) return 0;
  const r = await client.query("SELECT coalesce(max(version), 0) AS v FROM schema_migrations");
  const v = Number(r.rows[0].v);
  const latest = PG_MIGRATIONS.at(-1)!.version;
  if (v > latest) {
    throw contractError(
      "internal_error",
      `board database schema version ${v} is newer than this build knows (${latest}); upgrade ccmsg`,
    );
  }
  return v;
}
