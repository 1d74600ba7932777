import type { Db } from "./database.js";

/**
 * Group commit: writes requested during one turn of the event loop run in one
 * transaction on the next turn, and each caller's promise settles after the
 * commit. One commit costs about what one autocommit insert costs, so a burst
 * of 1,000 sends pays one commit instead of 1,000, while a caller is still
 * answered only once its write is on disk.
 */
export class CommitQueue {
  private pending: { write: () => void; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(private readonly db: Db) {}

  /** Queue a write; resolves once it is committed. */
  run(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ write, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commit everything queued now (also used at shutdown). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      this.db.transaction(() => {
        for (const op of batch) op.write();
      })();
    } catch (error) {
      for (const op of batch) op.reject(error);
      return;
    }
    for (const op of batch) op.resolve();
  }
}
