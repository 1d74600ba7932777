import { INBOX_RETENTION_MS } from "../../contract/constants.js";
import { NOTIFICATIONS_KEPT, NOTIFICATIONS_RETENTION_MS } from "../../contract/notifications.js";
import { CommitQueue } from "../../store/commit-queue.js";
import { type Db, openRecovering } from "../../store/database.js";
import { EccSessionsStore } from "../../store/ecc-sessions.js";
import { InboxStore } from "../../store/inbox.js";
import { KvStore } from "../../store/kv.js";
import { LastLiveStore } from "../../store/last-live.js";
import { openStateStore } from "../../store/migrated-store.js";
import { NotificationsStore } from "../../store/notifications.js";
import type { StateStore } from "../../store/state-store.js";
import type { Logger } from "../../util/logger.js";

/** The instance's one SQLite file and the table families on it. */
export interface InstanceStore {
  readonly db: Db;
  /** The store's transaction rules, for the board. */
  readonly state: StateStore;
  readonly queue: CommitQueue;
  readonly inbox: InboxStore;
  /** The person's inbox (DR-0056). */
  readonly notifications: NotificationsStore;
  readonly lastLive: LastLiveStore;
  readonly kv: KvStore;
  readonly eccSessions: EccSessionsStore;
  /** Queue a write on the group commit; a failure is logged, never thrown. */
  persist(write: () => void): void;
  /** Compact the inbox and the person's inbox in the background (after the
   * socket listens): resolves with the inbox rows removed, never rejects. */
  compact(now: number): Promise<number>;
}

/**
 * Open and migrate the instance's file. While starting, it may wait for
 * another process's write lock like any writer; once open, its connection
 * never waits (busy timeout 0): every write goes through the group commit,
 * which retries on a timer instead, so the event loop never sits in SQLite's
 * busy wait.
 */
export function openInstanceStore(path: string, log: Logger, recover = false): InstanceStore {
  // A damaged file is refused, or with `recover` moved aside (kept) and an
  // empty store started.
  const state = openRecovering(
    path,
    recover,
    () => openStateStore(path),
    (to) => log.warn({ to }, "damaged database moved aside; starting an empty one"),
  );
  const { db } = state;
  db.pragma("busy_timeout = 0");
  // SQLite's own default page cache (2 MB) instead of better-sqlite3's 16 MB:
  // one compaction pass over a large inbox filled it for the life of the
  // instance, while the pages in use (the inbox's newest rows, the indexes)
  // fit in far less (DR-0022).
  db.pragma("cache_size = -2000");
  const queue = new CommitQueue(db, path);
  const inbox = new InboxStore(db, queue);
  const notifications = new NotificationsStore(
    db,
    queue,
    NOTIFICATIONS_KEPT,
    NOTIFICATIONS_RETENTION_MS,
  );
  return {
    db,
    state,
    queue,
    inbox,
    notifications,
    lastLive: new LastLiveStore(db),
    kv: new KvStore(db),
    eccSessions: new EccSessionsStore(db),
    persist(write) {
      queue.run(write).catch((error: unknown) => log.error({ err: error }, "state write failed"));
    },
    compact(now) {
      notifications.compact(now).then(
        (removed) => {
          if (db.open) log.info({ removed }, "notifications compacted");
        },
        (error: unknown) => {
          if (db.open) log.warn({ err: error }, "notification compaction stopped");
        },
      );
      return inbox.compact(now, INBOX_RETENTION_MS).then(
        (removed) => {
          // A stop may have cut it short (the file closed between steps).
          if (db.open) log.info({ removed }, "inbox compacted");
          return removed;
        },
        (error: unknown) => {
          // Compaction only saves space; what it left is compacted next start.
          if (db.open) log.warn({ err: error }, "inbox compaction stopped");
          return 0;
        },
      );
    },
  };
}
