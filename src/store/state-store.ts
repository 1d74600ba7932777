import { existsSync } from "node:fs";
import { ContractError, contractError, STATE_STORE_BUSY } from "../contract/errors.js";
import { type Db, damagedDatabase, isBusyError, isDamagedError, openDatabase } from "./database.js";

/**
 * Another operation held the database's write lock for the whole wait (5 s):
 * `STATE_STORE_BUSY`, HTTP 503. Retry when it finishes. Locks are SQLite's
 * own: nothing is ever stolen, and nothing is left behind by a crashed
 * holder — SQLite releases a dead process's lock with the process. To see who
 * holds the file: `fuser -v <db>` or `lsof <db>`.
 */
export function storeBusy(dbPath: string, cause?: unknown): ContractError {
  return contractError(
    STATE_STORE_BUSY,
    `state store is busy: another operation holds the write lock on ${dbPath}; retry when it finishes (see who holds it: fuser -v ${dbPath})`,
    { cause, status: 503 },
  );
}

/**
 * What a failed write tells its caller: the disk is full, or the file could not
 * be written, named with the file and what to do — nothing of the write was
 * kept. Busy and damaged files keep their own failures; anything else (a
 * programming error) is passed on as it is.
 */
export function storeFailed(dbPath: string, error: unknown): unknown {
  if (error instanceof ContractError) return error;
  if (isBusyError(error)) return storeBusy(dbPath, error);
  if (isDamagedError(error)) return damagedDatabase(dbPath, error);
  const code = (error as { code?: unknown })?.code;
  if (code === "SQLITE_FULL") {
    return contractError(
      "internal_error",
      `nothing was stored: the disk holding ${dbPath} is full; free space and retry`,
      { cause: error },
    );
  }
  if (typeof code === "string" && /^SQLITE_(IOERR|READONLY|CANTOPEN)/.test(code)) {
    return contractError(
      "internal_error",
      `nothing was stored: ${dbPath} could not be written (${code}); retry, and check the disk if it persists`,
      { cause: error },
    );
  }
  return error;
}

/** Whether an error is the store's busy failure (`storeBusy`). */
export function isStoreBusy(error: unknown): error is ContractError {
  return error instanceof ContractError && error.code === STATE_STORE_BUSY;
}

export interface StateStore {
  readonly db: Db;
  readonly path: string;
  /** Run `fn` in one `BEGIN IMMEDIATE` transaction: it waits for the write
   * lock up to the busy timeout, then fails with `storeBusy`; a
   * read-modify-write inside it is atomic across processes. A write the disk
   * refused (full, I/O error) fails with `storeFailed`'s words. */
  write<T>(fn: () => T): T;
  /** Run `fn` over one consistent snapshot (a deferred transaction). */
  read<T>(fn: () => T): T;
  close(): void;
}

export interface StoreOptions {
  busyTimeoutMs?: number;
}

/**
 * Open an existing store for reading only, or `undefined` when there is none
 * (a read never creates the file). Reading writes nothing to the database;
 * migrations are not run, so a reader copes with an older file itself.
 */
export function openStateStoreReadOnly(path: string): StateStore | undefined {
  if (path !== ":memory:" && !existsSync(path)) return undefined;
  return stateStoreOver(openDatabase(path, { readonly: true }), path);
}

/** The store's transaction rules over an open database. */
export function stateStoreOver(db: Db, path: string): StateStore {
  return {
    db,
    path,
    write: (fn) => {
      try {
        return db.transaction(fn).immediate();
      } catch (error) {
        throw storeFailed(path, error);
      }
    },
    read: (fn) => busy(path, () => db.transaction(fn).deferred()),
    close: () => db.close(),
  };
}

/** Map SQLite's busy error (and a damaged file found mid-use) to ours at the
 * boundary, keeping SQLite's as the cause. */
export function busy<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isBusyError(error)) throw storeBusy(path, error);
    if (isDamagedError(error)) throw damagedDatabase(path, error);
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
