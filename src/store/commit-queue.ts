import { type Db, isBusyError } from "./database.js";
import { storeBusy } from "./state-store.js";

/** How long queued writes keep retrying a write lock another process holds
 * before their callers hear `storeBusy` (STATE_STORE_BUSY). */
const RETRY_DEADLINE_MS = 5000;

/**
 * Group commit: writes requested during one turn of the event loop run in one
 * transaction on the next turn, and each caller's promise settles after the
 * commit. One commit costs about what one autocommit insert costs, so a burst
 * of 1,000 sends pays one commit instead of 1,000, while a caller is still
 * answered only once its write is on disk.
 *
 * When another process holds the write lock, the batch is kept and retried on
 * a timer rather than waited for: the event loop never sits in SQLite's busy
 * wait, so health checks and message delivery go on meanwhile.
 */
export class CommitQueue {
  private pending: { write: () => void; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  private retry: NodeJS.Timeout | undefined;
  private busySince: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly path: string,
  ) {}

  /** Queue a write; resolves once it is committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ write, resolve, reject });
      if (!this.scheduled && this.retry === undefined) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commit everything queued now; returns false when the lock is taken (the
   * batch stays queued and a retry is scheduled). */
  flush(): boolean {
    this.scheduled = false;
    if (this.retry !== undefined) {
      clearTimeout(this.retry);
      this.retry = undefined;
    }
    const batch = this.pending;
    if (batch.length === 0) return true;
    try {
      this.db
        .transaction(() => {
          for (const op of batch) op.write();
        })
        .immediate();
    } catch (error) {
      if (isBusyError(error)) return this.backOff(error);
      this.pending = this.pending.slice(batch.length);
      for (const op of batch) op.reject(error);
      return true;
    }
    this.busySince = undefined;
    this.pending = this.pending.slice(batch.length);
    for (const op of batch) op.resolve();
    return true;
  }

  private backOff(error: unknown): false {
    const now = Date.now();
    this.busySince ??= now;
    if (now - this.busySince >= RETRY_DEADLINE_MS) {
      const batch = this.pending;
      this.pending = [];
      this.busySince = undefined;
      for (const op of batch) op.reject(storeBusy(this.path, error));
      return false;
    }
    this.retry = setTimeout(() => this.flush(), Math.min(50, 5 + (now - this.busySince) / 10));
    return false;
  }

  /** Writes waiting for the lock or the next turn. */
  size(): number {
    return this.pending.length;
  }
}
