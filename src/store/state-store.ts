import { existsSync } from "node:fs";
import { BUSY_TIMEOUT_MS, type Db, isBusyError, openDatabase } from "./database.js";
import { migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";

/** The code ECC's surfaces use for "the write lock stayed taken past the wait". */
export const STATE_STORE_BUSY = "STATE_STORE_BUSY";

/**
 * Another operation held the database's write lock for the whole wait (5 s).
 * Retry when it finishes. Locks are SQLite's own: nothing is ever stolen, and
 * nothing is left behind by a crashed holder — SQLite releases a dead
 * process's lock with the process. To see who holds the file:
 * `fuser -v <db>` or `lsof <db>`.
 */
export class StoreBusyError extends Error {
  override readonly name = "StoreBusyError";
  readonly code = STATE_STORE_BUSY;
  constructor(dbPath: string, cause?: unknown) {
    super(
      `state store is busy: another operation holds the write lock on ${dbPath}; retry when it finishes (see who holds it: fuser -v ${dbPath})`,
      { cause },
    );
  }
}

export interface StateStore {
  readonly db: Db;
  readonly path: string;
  /** Run `fn` in one `BEGIN IMMEDIATE` transaction: it waits for the write
   * lock up to the busy timeout, then fails with `StoreBusyError`; a
   * read-modify-write inside it is atomic across processes. */
  write<T>(fn: () => T): T;
  /** Run `fn` over one consistent snapshot (a deferred transaction). */
  read<T>(fn: () => T): T;
  close(): void;
}

export interface StoreOptions {
  busyTimeoutMs?: number;
}

/** Open (and bring up to date) the store for writing. `:memory:` leaves no
 * files. Any process may do this; every writer gets the same busy rules. */
export function openStateStore(path: string, options: StoreOptions = {}): StateStore {
  const db = openDatabase(path, { busyTimeoutMs: options.busyTimeoutMs ?? BUSY_TIMEOUT_MS });
  try {
    busy(path, () => migrate(db, MIGRATIONS));
  } catch (error) {
    db.close();
    throw error;
  }
  return wrap(db, path);
}

/**
 * Open an existing store for reading only, or `undefined` when there is none
 * (a read never creates the file). Reading writes nothing to the database;
 * migrations are not run, so a reader copes with an older file itself.
 */
export function openStateStoreReadOnly(path: string): StateStore | undefined {
  if (path !== ":memory:" && !existsSync(path)) return undefined;
  return wrap(openDatabase(path, { readonly: true }), path);
}

function wrap(db: Db, path: string): StateStore {
  return {
    db,
    path,
    write: (fn) => busy(path, () => db.transaction(fn).immediate()),
    read: (fn) => busy(path, () => db.transaction(fn).deferred()),
    close: () => db.close(),
  };
}

/** Map SQLite's busy error to ours at the boundary, keeping it as the cause. */
export function busy<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isBusyError(error)) throw new StoreBusyError(path, error);
    throw error;
  }
}

/** Whether a table exists (a read-only reader of an older file asks). */
export function hasTable(db: Db, name: string): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
    undefined
  );
}
