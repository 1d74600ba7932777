import type { InboxMessage } from "../contract/messaging.js";
import type { CommitQueue } from "./commit-queue.js";
import { type Db, isBusyError } from "./database.js";

/**
 * The inbox table: every message the instance accepted, `held` until its
 * recipient takes it. Writes go through the commit queue (acknowledged only
 * once committed); reads flush it first so they see every accepted write.
 */
export class InboxStore {
  private readonly insert;
  private readonly dropOldestHeld;
  private readonly selectHeld;
  private readonly markDelivered;
  private readonly countHeld;
  private readonly maxCounter;
  private readonly countAllHeld;
  private readonly heldCounts = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly queue: CommitQueue,
  ) {
    this.insert = db.prepare(
      "INSERT INTO inbox (counter, sid, state, message, sent_at, settled_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.dropOldestHeld = db.prepare(
      `UPDATE inbox SET state = 'dropped', settled_at = ?
       WHERE counter = (SELECT min(counter) FROM inbox WHERE sid = ? AND state = 'held')
       RETURNING counter, message`,
    );
    this.selectHeld = db.prepare(
      "SELECT counter, message FROM inbox WHERE sid = ? AND state = 'held' AND sent_at > ? ORDER BY counter",
    );
    this.markDelivered = db.prepare(
      "UPDATE inbox SET state = 'delivered', settled_at = ? WHERE sid = ? AND state = 'held' AND counter <= ? AND sent_at > ?",
    );
    this.countHeld = db.prepare("SELECT count(*) AS n FROM inbox WHERE sid = ? AND state = 'held'");
    this.maxCounter = db.prepare("SELECT max(counter) AS n FROM inbox");
    this.countAllHeld = db.prepare(
      "SELECT count(*) AS n FROM inbox WHERE state = 'held' AND sent_at > ?",
    );
  }

  /** The highest counter ever stored (0 when none), so mids stay increasing
   * across restarts. */
  highestCounter(): number {
    return (this.maxCounter.get() as { n: number | null }).n ?? 0;
  }

  /** Messages held for anyone and not yet expired (committed ones). */
  heldTotal(now: number, retentionMs: number): number {
    return (this.countAllHeld.get(now - retentionMs) as { n: number }).n;
  }

  /** Held messages of `sid`, including any not yet committed. */
  heldCount(sid: string): number {
    let n = this.heldCounts.get(sid);
    if (n === undefined) {
      // Queued writes for this sid are all counted in memory from the moment
      // the count exists, so the committed rows are the rest.
      n = (this.countHeld.get(sid) as { n: number }).n;
      this.heldCounts.set(sid, n);
    }
    return n;
  }

  /** Record a message handed over at once. */
  recordDelivered(sid: string, counter: number, message: InboxMessage): Promise<void> {
    const json = JSON.stringify(message);
    return this.queue.run(() => {
      this.insert.run(counter, sid, "delivered", json, message.sent_at, message.sent_at);
    });
  }

  /**
   * Hold a message. When that makes more than `max` held for the sid, the
   * oldest is dropped in the same transaction; `dropped` is then true and
   * `onDropped` is told which mid went once the commit happened.
   */
  hold(
    sid: string,
    counter: number,
    message: InboxMessage,
    max: number,
    onDropped?: (mid: string) => void,
  ): { committed: Promise<void>; dropped: boolean } {
    const count = this.heldCount(sid) + 1;
    const dropped = count > max;
    this.heldCounts.set(sid, dropped ? count - 1 : count);
    const json = JSON.stringify(message);
    const committed = this.queue.run(() => {
      this.insert.run(counter, sid, "held", json, message.sent_at, null);
      if (dropped) {
        const row = this.dropOldestHeld.get(message.sent_at, sid) as
          | { message: string }
          | undefined;
        if (row && onDropped) onDropped((JSON.parse(row.message) as InboxMessage).mid);
      }
    });
    return { committed, dropped };
  }

  /**
   * Take everything still held for `sid` and not expired, oldest first, and
   * mark it delivered in the same step — subscribing is receiving, so a
   * message never leaves on two routes.
   */
  takeHeld(sid: string, now: number, retentionMs: number): InboxMessage[] {
    // Commit what is queued first (the snapshot must see every accepted
    // message). Under another process's write lock that may not happen now:
    // then nothing is handed over and everything stays held, never lost.
    if (!this.queue.flush()) return [];
    const cutoff = now - retentionMs;
    let rows: { counter: number; message: string }[] = [];
    try {
      this.db
        .transaction(() => {
          rows = this.selectHeld.all(sid, cutoff) as { counter: number; message: string }[];
          if (rows.length > 0) this.markDelivered.run(now, sid, rows.at(-1)!.counter, cutoff);
        })
        .immediate();
    } catch (error) {
      if (isBusyError(error)) return [];
      throw error;
    }
    this.heldCounts.set(sid, 0);
    return rows.map((r) => JSON.parse(r.message) as InboxMessage);
  }

  /**
   * Startup compaction: forget settled rows and expired held ones, keeping the
   * highest counter as the mid floor. Expiry itself never writes; this is the
   * one place expired messages leave the file.
   */
  compact(now: number, retentionMs: number): { removed: number } {
    const floor = this.highestCounter();
    const removed = this.db.transaction(() => {
      this.db
        .prepare(
          "INSERT INTO meta (key, value) VALUES ('mid_floor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .run(String(floor));
      return this.db
        .prepare("DELETE FROM inbox WHERE state != 'held' OR sent_at <= ?")
        .run(now - retentionMs).changes;
    })();
    return { removed };
  }

  /** The counter mids resume from: above every mid this instance ever issued. */
  midFloor(): number {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'mid_floor'").get() as
      | { value: string }
      | undefined;
    return Math.max(Number(row?.value ?? 0), this.highestCounter());
  }
}
