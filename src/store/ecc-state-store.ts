import { existsSync } from "node:fs";
import { openDatabase } from "./database.js";
import { eccLockPath, withEccLock } from "./ecc-lock.js";
import { type StateStore, stateStoreOver } from "./state-store.js";

// A state store of ECC's own tools (DR-0065), apart from state-store.ts so
// the commands that only read ccmsg's own store do not load it.

/**
 * Whether `path` is a state store ECC's own tools keep (ecc-surfaces §3):
 * its lock file is there, or its schema is ECC's alone — ECC's migration
 * ledger without ccmsg's schema version. ccmsg must then take part in ECC's
 * lock (`eccOperation`), run none of its migrations and never turn it to WAL.
 */
export function isEccStateStore(path: string): boolean {
  if (path === ":memory:" || !existsSync(path)) return false;
  if (existsSync(eccLockPath(path))) return true;
  const db = openDatabase(path, { readonly: true });
  try {
    const ledger = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    return ledger !== undefined && db.pragma("user_version", { simple: true }) === 0;
  } finally {
    db.close();
  }
}

/**
 * One operation on an ECC state store, as ECC's own adapter runs one: under
 * its lock (5 s, then STATE_STORE_BUSY), on a handle opened for it alone —
 * ECC publishes a new file on each write, so a handle kept open would read
 * an older one — and closed before the lock is released. Writes go to the
 * main file (its journal mode kept), which ECC reloads under the lock.
 */
export function eccOperation<T>(path: string, fn: (store: StateStore) => T): T {
  return withEccLock(path, () => {
    const db = openDatabase(path, { keepJournal: true });
    try {
      return fn(stateStoreOver(db, path));
    } finally {
      db.close();
    }
  });
}
