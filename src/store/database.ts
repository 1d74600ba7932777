import { existsSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { type ContractError, contractError } from "../contract/errors.js";

const require = createRequire(import.meta.url);
// Required, not imported: a CommonJS package imported from ESM is first
// scanned for its exports, a cost every start paid (DR-0022).
const Database = require("better-sqlite3") as typeof BetterSqlite3;

export type Db = BetterSqlite3.Database;

/** How long an operation waits for another process's write lock before it is
 * reported busy (ecc-surfaces §3.4: five seconds, never stolen). */
export const BUSY_TIMEOUT_MS = 5000;

/** About what one automatic checkpoint's worth of WAL (1,000 pages) holds. */
const JOURNAL_SIZE_LIMIT = 4 << 20;

export interface OpenOptions {
  readonly?: boolean;
  /** Override the lock wait; tests use short waits to prove the busy path. */
  busyTimeoutMs?: number;
  /** Keep the file's journal mode (a file ECC's tools share stays out of
   * WAL: their engine reads the main file alone). */
  keepJournal?: boolean;
}

/**
 * Open the instance's SQLite file (or `:memory:`, which leaves no files).
 *
 * WAL lets readers (health, snapshots, other processes) proceed while one
 * writer commits; `synchronous = NORMAL` in WAL mode keeps every committed
 * transaction across a process crash (`kill -9`), which is the durability the
 * instance promises — only a power loss could take the last commits.
 *
 * A file that is not a database, or a damaged one (truncated, overwritten),
 * is refused here with an `internal_error` naming it, SQLite's error kept as
 * `cause`. Nothing is repaired or recreated: the bytes stay as they were for
 * a person to inspect or restore, since any "recovery" could destroy data.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  const db = new Database(path, { readonly: options.readonly ?? false, nativeBinding: addon() });
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
    // Read the header and the schema before anything writes: a foreign or
    // damaged file fails here (SQLITE_NOTADB / SQLITE_CORRUPT), untouched.
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    if (!options.readonly && !options.keepJournal && path !== ":memory:") {
      // Setting the journal mode writes the header once; later opens find it set.
      if (db.pragma("journal_mode", { simple: true }) !== "wal") db.pragma("journal_mode = WAL");
      // A WAL longer than this (a large transaction grew it) is cut back to
      // it when a checkpoint restarts it; left alone it stays that long.
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    }
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
  } catch (error) {
    db.close();
    throw isDamagedError(error) ? damagedDatabase(path, error) : error;
  }
  return db;
}

let addonPath: string | undefined | null = null;

/** Where better-sqlite3's addon was built, found once. Left to the library it
 * loads the `bindings` package, which probes a dozen paths: ~2 ms of every
 * start (DR-0022). A build elsewhere falls back to that search. */
function addon(): string | undefined {
  if (addonPath === null) {
    try {
      addonPath = require.resolve("better-sqlite3/build/Release/better_sqlite3.node");
    } catch {
      addonPath = undefined;
    }
  }
  return addonPath;
}

/** A SQLite error meaning the file is not a (whole) database. */
export function isDamagedError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    code === "SQLITE_NOTADB" || (typeof code === "string" && code.startsWith("SQLITE_CORRUPT"))
  );
}

/** Our error for a damaged file: names it and says what (not) to do. */
export function damagedDatabase(path: string, cause: unknown): ContractError {
  if (damaged.has(cause as object)) return cause as ContractError;
  const why = cause instanceof Error ? cause.message : String(cause);
  const error = contractError(
    "internal_error",
    `${path} is not a usable database (${why}); it was left as it is. To start with an empty store and keep the damaged file, run \`ccmsg daemon run --recover\` (it is moved to ${path}.corrupt-<time>); or restore it from a copy`,
    { cause },
  );
  damaged.add(error);
  return error;
}

/** The errors `damagedDatabase` made, so a caller can tell them apart. */
const damaged = new WeakSet<object>();

/**
 * Open the store with `open`. When the file turns out to be damaged: without
 * `recover`, fail naming it (nothing touched); with `recover`, move the file
 * and its WAL sidecars aside — kept, as `<path>.corrupt-<time>` — and open an
 * empty store in its place. A healthy file is opened as it is either way.
 */
export function openRecovering<T>(
  path: string,
  recover: boolean,
  open: () => T,
  movedAside: (to: string) => void,
): T {
  try {
    return open();
  } catch (error) {
    if (!isDamagedError(error) && !damaged.has(error as object)) throw error;
    if (!recover) throw damagedDatabase(path, error);
  }
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  const to = `${path}.corrupt-${stamp}`;
  for (const suffix of ["", "-wal", "-shm"]) {
    if (existsSync(path + suffix)) renameSync(path + suffix, to + suffix);
  }
  movedAside(to);
  return open();
}

/** A SQLite error meaning another connection holds the lock we needed. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || code === "SQLITE_LOCKED";
}
