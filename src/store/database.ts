import Database from "better-sqlite3";

export type Db = Database.Database;

/** How long an operation waits for another process's write lock before it is
 * reported busy (ecc-surfaces §3.4: five seconds, never stolen). */
export const BUSY_TIMEOUT_MS = 5000;

export interface OpenOptions {
  readonly?: boolean;
  /** Override the lock wait; tests use short waits to prove the busy path. */
  busyTimeoutMs?: number;
}

/**
 * Open the instance's SQLite file (or `:memory:`, which leaves no files).
 *
 * WAL lets readers (health, snapshots, other processes) proceed while one
 * writer commits; `synchronous = NORMAL` in WAL mode keeps every committed
 * transaction across a process crash (`kill -9`), which is the durability the
 * instance promises — only a power loss could take the last commits.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  const db = new Database(path, { readonly: options.readonly ?? false });
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
  if (!options.readonly && path !== ":memory:") {
    // Setting the journal mode writes the header once; later opens find it set.
    if (db.pragma("journal_mode", { simple: true }) !== "wal") db.pragma("journal_mode = WAL");
  }
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  return db;
}

/** A SQLite error meaning another connection holds the lock we needed. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || code === "SQLITE_LOCKED";
}
