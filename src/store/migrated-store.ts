import { BUSY_TIMEOUT_MS, openDatabase } from "./database.js";
import { migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";
import { busy, type StateStore, type StoreOptions, stateStoreOver } from "./state-store.js";

// The store opened for writing, with every migration: apart from the handle
// (state-store.ts), so a reader (`ccmsg status`) loads no migration.

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
  return stateStoreOver(db, path);
}
