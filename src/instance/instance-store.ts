import type { Logger } from "pino";
import { INBOX_RETENTION_MS } from "../contract/constants.js";
import { CommitQueue } from "../store/commit-queue.js";
import { type Db, isBusyError } from "../store/database.js";
import { EccSessionsStore } from "../store/ecc-sessions.js";
import { InboxStore } from "../store/inbox.js";
import { KvStore } from "../store/kv.js";
import { LastLiveStore } from "../store/last-live.js";
import { openStateStore, type StateStore } from "../store/state-store.js";

/** The instance's one SQLite file and the table families on it. */
export interface InstanceStore {
  readonly db: Db;
  /** The store's transaction rules, for the board. */
  readonly state: StateStore;
  readonly queue: CommitQueue;
  readonly inbox: InboxStore;
  readonly lastLive: LastLiveStore;
  readonly kv: KvStore;
  readonly eccSessions: EccSessionsStore;
  /** Queue a write on the group commit; a failure is logged, never thrown. */
  persist(write: () => void): void;
}

/**
 * Open, migrate and compact the instance's file. While starting, it may wait
 * for another process's write lock like any writer; once open, its connection
 * never waits (busy timeout 0): every write goes through the group commit,
 * which retries on a timer instead, so the event loop never sits in SQLite's
 * busy wait.
 */
export function openInstanceStore(
  path: string,
  log: Logger,
  now: number,
): { store: InstanceStore; compacted: number } {
  const state = openStateStore(path);
  const { db } = state;
  const queue = new CommitQueue(db, path);
  const inbox = new InboxStore(db, queue);
  let compacted = 0;
  try {
    compacted = inbox.compact(now, INBOX_RETENTION_MS).removed;
  } catch (error) {
    // Compaction only saves space; a store someone holds is compacted next time.
    if (!isBusyError(error)) throw error;
    log.warn({ err: error }, "compaction skipped: another process holds the write lock");
  }
  db.pragma("busy_timeout = 0");
  const store: InstanceStore = {
    db,
    state,
    queue,
    inbox,
    lastLive: new LastLiveStore(db),
    kv: new KvStore(db),
    eccSessions: new EccSessionsStore(db),
    persist(write) {
      queue.run(write).catch((error: unknown) => log.error({ err: error }, "state write failed"));
    },
  };
  return { store, compacted };
}
