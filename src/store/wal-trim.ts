import type { Db } from "./database.js";

// A WAL file keeps its high-water mark: SQLite's checkpoints move its pages
// into the database and start writing it again from its start, but never
// make it shorter (without journal_size_limit), so a burst left ~4 MB beside
// each database for the life of the process (issue 26). Once a database's
// writes stop, one TRUNCATE checkpoint moves what is left into it and cuts
// the WAL to nothing. Durability is unchanged: a checkpoint syncs the
// database before it drops the WAL frames it copied.

/** How often a database is looked at; writes stopped for one whole period
 * mean idle. */
export const WAL_TRIM_IDLE_MS = 1000;

/**
 * Trim `db`'s WAL whenever nothing was written to the database — by this
 * connection or another — for one period since its last write. The
 * checkpoint never waits for a lock (busy timeout 0 while it runs): when
 * another connection reads or writes, it is tried again at the next idle
 * period. Its work is what the next automatic checkpoint would have done (at
 * most ~4 MB of pages): a PASSIVE checkpoint first, which copies and syncs
 * without holding the write lock, then the TRUNCATE, which holds it only to
 * cut the file. It blocks its own thread for that (tens of ms on a loaded
 * disk), so the instance runs its store's trim on the index worker, not on
 * its event loop. Returns a stop function; the timer never holds the
 * process open.
 */
export function trimWalWhenIdle(db: Db, periodMs = WAL_TRIM_IDLE_MS): () => void {
  const own = db.prepare("SELECT total_changes()").pluck();
  const changes = () => `${own.get()}:${db.pragma("data_version", { simple: true })}`;
  let seen = changes();
  let trimmed = seen;
  const timer = setInterval(() => {
    if (!db.open) return clearInterval(timer);
    const now = changes();
    if (now !== seen) {
      seen = now;
      return;
    }
    if (now === trimmed || db.inTransaction) return;
    const wait = db.pragma("busy_timeout", { simple: true }) as number;
    try {
      if (wait !== 0) db.pragma("busy_timeout = 0");
      db.pragma("wal_checkpoint(PASSIVE)");
      const [row] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      if (row?.busy === 0) trimmed = now;
    } catch {
      // Another connection holds a lock (or the database is going): next period.
    } finally {
      if (wait !== 0 && db.open) db.pragma(`busy_timeout = ${wait}`);
    }
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
