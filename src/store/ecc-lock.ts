import {
  type BigIntStats,
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { contractError, STATE_STORE_BUSY, STATE_STORE_LOCK_LOST } from "../contract/errors.js";

// ECC's own state-store lock (ecc-surfaces §3.4), spoken exactly, for a
// SQLite file that ECC's tools share: each operation holds a sibling
// `<database>.ecc-state.lock`, created exclusively with the holder's pid and
// hostname, for the operation alone. ECC's engine loads the whole file under
// that lock and publishes a whole new file before releasing it, so a writer
// that does not take part can lose writes, or have its own lost. Never
// stolen, never expired: a paused holder may still be writing.

/** How long an operation waits for the lock, then STATE_STORE_BUSY. */
export const ECC_LOCK_TIMEOUT_MS = 5000;
/** The fixed poll while another holds it (no backoff, no jitter). */
const POLL_MS = 20;

export const eccLockPath = (dbPath: string) => `${dbPath}.ecc-state.lock`;

/** A blocking sleep: the protocol's operations are synchronous, and these
 * run in CLI processes and workers, never on a server's event loop. */
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Run `fn` holding `dbPath`'s ECC lock. The operation's error stays the one
 * thrown (a release failure rides along as `releaseError`); a release failure
 * after a successful operation is thrown, since the operation cannot be
 * known to have published safely.
 */
export function withEccLock<T>(dbPath: string, fn: () => T, timeoutMs = ECC_LOCK_TIMEOUT_MS): T {
  const lock = acquire(dbPath, timeoutMs);
  let result: T;
  try {
    result = fn();
  } catch (error) {
    try {
      release(lock);
    } catch (releaseError) {
      attach(error, "releaseError", releaseError);
    }
    throw error;
  }
  release(lock);
  return result;
}

interface Held {
  path: string;
  fd: number;
  dev: bigint;
  ino: bigint;
}

function acquire(dbPath: string, timeoutMs: number): Held {
  const path = eccLockPath(dbPath);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const left = deadline - performance.now();
      if (left <= 0) throw busy(dbPath, path);
      sleep(Math.min(POLL_MS, left));
      continue;
    }
    try {
      const st = fstatSync(fd, { bigint: true });
      writeSync(fd, `${JSON.stringify({ pid: process.pid, hostname: hostname() })}\n`);
      return { path, fd, dev: st.dev, ino: st.ino };
    } catch (error) {
      try {
        unlinkSync(path);
      } catch {}
      closeSync(fd);
      throw error;
    }
  }
}

/** Unlink the lock while still holding it, then close it once; a lock that
 * is no longer the one created (gone, replaced, a symlink) is left alone. */
function release(lock: Held): void {
  try {
    let st: BigIntStats | undefined;
    try {
      st = lstatSync(lock.path, { bigint: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (
      st === undefined ||
      !st.isFile() ||
      st.isSymbolicLink() ||
      st.dev !== lock.dev ||
      st.ino !== lock.ino
    )
      throw contractError(
        STATE_STORE_LOCK_LOST,
        `the state-store lock ${lock.path} changed or was lost while held; refusing to remove it`,
      );
    unlinkSync(lock.path);
  } finally {
    closeSync(lock.fd);
  }
}

function busy(dbPath: string, lockPath: string) {
  return contractError(
    STATE_STORE_BUSY,
    `state store is busy: another operation holds ${lockPath} on ${dbPath}; retry when it finishes. After an abnormal exit: stop every ECC process using that database, inspect the pid and hostname in ${lockPath}, and remove only that lock file (never the database) before retrying`,
    { status: 503 },
  );
}

function attach(error: unknown, key: string, value: unknown): void {
  try {
    if (typeof error === "object" && error !== null && !Object.isFrozen(error))
      Reflect.set(error, key, value);
  } catch {}
}
