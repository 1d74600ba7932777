import type { Logger } from "pino";
import { CommitQueue } from "../store/commit-queue.js";
import type { Db } from "../store/database.js";
import { EccSessionsStore } from "../store/ecc-sessions.js";
import { InboxStore } from "../store/inbox.js";
import { KvStore } from "../store/kv.js";
import { LastLiveStore } from "../store/last-live.js";
import { openStateStore, type StateStore } from "../store/state-store.js";

/** The longest the instance's event loop may wait for another process's write
 * lock on a synchronous write (KV, last_live); past it the op fails and is
 * retried by its caller. */
const MAIN_BUSY_TIMEOUT_MS = 50;

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
 * Open and migrate the instance's file. Its own connection waits at most
 * briefly for another process's write lock: the group commit retries on a
 * timer instead, so the event loop never sits in SQLite's busy wait.
 */
export function openInstanceStore(path: string, log: Logger): InstanceStore {
  const state = openStateStore(path, { busyTimeoutMs: MAIN_BUSY_TIMEOUT_MS });
  const { db } = state;
  const queue = new CommitQueue(db, path);
  return {
    db,
    state,
    queue,
    inbox: new InboxStore(db, queue),
    lastLive: new LastLiveStore(db),
    kv: new KvStore(db),
    eccSessions: new EccSessionsStore(db),
    persist(write) {
      queue.run(write).catch((error: unknown) => log.error({ err: error }, "state write failed"));
    },
  };
}
