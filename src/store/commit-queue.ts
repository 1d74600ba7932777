import { type Db, isBusyError } from "./database.js";
import { storeBusy, storeFailed } from "./state-store.js";

/** How long a queued write keeps retrying a write lock another process holds
 * before its caller hears `storeBusy` (STATE_STORE_BUSY) — counted for each
 * write from when it was queued. */
const RETRY_DEADLINE_MS = 5000;

export interface CommitQueueOptions {
  /** Each write's wait for the lock (default RETRY_DEADLINE_MS). */
  deadlineMs?: number;
  /** The clock the deadlines are read on (tests move it). */
  now?: () => number;
}

interface Pending {
  write: () => unknown;
  /** When this write's wait ends. */
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
  /** Set once the write ran inside a transaction that then committed. */
  result?: unknown;
  failed?: unknown;
}

/**
 * Group commit: writes requested during one turn of the event loop run in one
 * transaction on the next turn, and each caller's promise settles after the
 * commit. One commit costs about what one autocommit insert costs, so a burst
 * of 1,000 sends pays one commit instead of 1,000, while a caller is still
 * answered only once its write is on disk.
 *
 * Each write of a batch runs in its own savepoint: one that throws is undone
 * alone and only its caller hears it. A batch of one write needs no savepoint
 * (its transaction is undone instead), which saves a third of the cost of the
 * common case: one send, one commit. A commit that fails (a full disk) fails
 * the batch. The transaction statements are prepared once.
 *
 * The connection never waits for a lock (busy timeout 0): when another process
 * holds the write lock, the batch is kept and retried on a timer, so the event
 * loop never sits in SQLite's busy wait and health checks, pings and delivery
 * go on meanwhile. Each write waits its own deadline: when a retry finds the
 * lock still taken, the writes whose wait is over are refused and the younger
 * ones stay queued (they are still committed together, in one transaction).
 */
export class CommitQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  private retry: NodeJS.Timeout | undefined;
  private busySince: number | undefined;
  private readonly sql;
  private readonly deadlineMs: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly path: string,
    options: CommitQueueOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? RETRY_DEADLINE_MS;
    this.now = options.now ?? Date.now;
    const statement = (text: string) => db.prepare(text);
    this.sql = {
      begin: statement("BEGIN IMMEDIATE"),
      commit: statement("COMMIT"),
      rollback: statement("ROLLBACK"),
      savepoint: statement("SAVEPOINT queued_write"),
      release: statement("RELEASE queued_write"),
      undo: statement("ROLLBACK TO queued_write"),
    };
  }

  /** Queue a write; resolves with what it returned once it is committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        write,
        deadline: this.now() + this.deadlineMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
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
      this.sql.begin.run();
      for (const op of batch) {
        op.failed = undefined;
        if (batch.length === 1) op.result = op.write();
        else this.runInSavepoint(op);
      }
      this.sql.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.sql.rollback.run();
      // Busy: the whole batch waits.
      if (isBusyError(error)) return this.backOff(error);
      this.pending = this.pending.slice(batch.length);
      const failure = storeFailed(this.path, error);
      for (const op of batch) op.reject(failure);
      return true;
    }
    this.busySince = undefined;
    this.pending = this.pending.slice(batch.length);
    for (const op of batch) {
      if (op.failed !== undefined) op.reject(storeFailed(this.path, op.failed));
      else op.resolve(op.result);
    }
    return true;
  }

  private runInSavepoint(op: Pending): void {
    this.sql.savepoint.run();
    try {
      op.result = op.write();
      this.sql.release.run();
    } catch (error) {
      // Some errors (a full disk) make SQLite roll back the whole
      // transaction: then the batch failed.
      if (isBusyError(error) || !this.db.inTransaction) throw error;
      this.sql.undo.run();
      this.sql.release.run();
      op.failed = error;
    }
  }

  /** The lock is taken: refuse the writes whose own wait is over, keep the
   * rest and try again soon (sooner while the wait is young). */
  private backOff(error: unknown): false {
    const now = this.now();
    this.busySince ??= now;
    const expired = this.pending.filter((op) => op.deadline <= now);
    if (expired.length > 0) {
      this.pending = this.pending.filter((op) => op.deadline > now);
      for (const op of expired) op.reject(storeBusy(this.path, error));
    }
    if (this.pending.length === 0) {
      this.busySince = undefined;
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
