import type BetterSqlite3 from "better-sqlite3";
import type { InboxMessage } from "../contract/messaging.js";
import type { CommitQueue } from "./commit-queue.js";
import { type Db, isBusyError } from "./database.js";

/** A held message with its per-instance counter (the number in its mid). */
export interface HeldMessage {
  counter: number;
  message: InboxMessage;
}

/** Rows one compaction step looks at: ~1 ms of work per step. */
const COMPACT_STEP = 2000;

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
  private readonly selectOldestHeld;
  private readonly insertInFlight;
  private readonly maxCounter;
  private readonly countAllHeld;
  private readonly countHeldBySid;
  private readonly heldCounts = new Map<string, number>();
  /** Per sid, every held row (counter → sent_at), from the moment its hold
   * is asked for until its settlement is committed: what a new message must
   * not overtake (DR-0053). It may overstate for a moment (a settlement
   * committed, not yet applied), which only holds a new message that could
   * have gone at once; it never understates. A sid's committed rows are read
   * in on its first use (`heldRead`), not all at start. */
  private readonly held = new Map<string, Map<number, number>>();
  private readonly heldRead = new Set<string>();
  private readonly selectHeldAges;
  /** Per sid, the message route (a) is handing over on its own (contract
   * §7.7: one offer per sid at a time) — a held one it claimed or a new one
   * not stored yet: no peek or take includes it or anything newer meanwhile,
   * so nothing leaves before it on another route. */
  private readonly claimed = new Map<string, number>();
  /** Held messages that were in flight when the last run of the instance
   * ended (`offered_at` set, never settled: in a harness's hands, or a frame
   * on its way to a subscriber's socket): left out of every peek and claim
   * until their session's transcript settles them (`settleInDoubt`). */
  private readonly inDoubt = new Map<number, { sid: string; message: InboxMessage }>();
  private readonly markOffered;
  private readonly clearOffered;
  /** Prepared on first use: only transcripts' sends read it (DR-0057). */
  private selectSent: BetterSqlite3.Statement<[number, number, number]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly queue: CommitQueue,
  ) {
    this.insert = db.prepare(
      "INSERT INTO inbox (counter, sid, state, message, sent_at, settled_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.dropOldestHeld = db.prepare(
      `UPDATE inbox SET state = 'dropped', settled_at = ?
       WHERE counter = (SELECT min(counter) FROM inbox WHERE sid = ? AND state = 'held' AND offered_at IS NULL AND sent_at > ?)`,
    );
    this.selectHeld = db.prepare(
      "SELECT counter, message FROM inbox WHERE sid = ? AND state = 'held' AND sent_at > ? ORDER BY counter",
    );
    this.markDelivered = db.prepare(
      "UPDATE inbox SET state = 'delivered', settled_at = ? WHERE sid = ? AND state = 'held' AND counter = ?",
    );
    // What the per-recipient limit counts and drops: held messages not in
    // flight (a frame on its way to a socket or a harness has `offered_at`).
    this.countHeld = db.prepare(
      "SELECT count(*) AS n FROM inbox WHERE sid = ? AND state = 'held' AND offered_at IS NULL AND sent_at > ?",
    );
    this.selectOldestHeld = db.prepare(
      "SELECT counter, message FROM inbox WHERE sid = ? AND state = 'held' AND offered_at IS NULL AND sent_at > ? ORDER BY counter LIMIT 1",
    );
    this.insertInFlight = db.prepare(
      "INSERT INTO inbox (counter, sid, state, message, sent_at, offered_at) VALUES (?, ?, 'held', ?, ?, ?)",
    );
    this.maxCounter = db.prepare("SELECT max(counter) AS n FROM inbox");
    this.selectHeldAges = db.prepare(
      "SELECT counter, sent_at FROM inbox WHERE sid = ? AND state = 'held'",
    );
    this.countAllHeld = db.prepare(
      "SELECT count(*) AS n FROM inbox WHERE state = 'held' AND sent_at > ?",
    );
    this.countHeldBySid = db.prepare(
      "SELECT sid, count(*) AS n FROM inbox WHERE state = 'held' AND sent_at > ? GROUP BY sid",
    );
    this.markOffered = db.prepare(
      "UPDATE inbox SET offered_at = ? WHERE sid = ? AND state = 'held' AND counter = ?",
    );
    this.clearOffered = db.prepare(
      "UPDATE inbox SET offered_at = NULL WHERE sid = ? AND state = 'held' AND counter = ?",
    );
    const doubtful = db
      .prepare(
        "SELECT counter, sid, message FROM inbox WHERE offered_at IS NOT NULL AND state = 'held'",
      )
      .all() as { counter: number; sid: string; message: string }[];
    for (const r of doubtful)
      this.inDoubt.set(r.counter, { sid: r.sid, message: JSON.parse(r.message) as InboxMessage });
  }

  private noteHeld(sid: string, counter: number, sentAt: number): void {
    const rows = this.held.get(sid) ?? new Map<number, number>();
    this.held.set(sid, rows);
    rows.set(counter, sentAt);
  }

  private noteGone(sid: string, counters: Iterable<number>): void {
    const rows = this.held.get(sid);
    if (rows === undefined) return;
    for (const c of counters) rows.delete(c);
    if (rows.size === 0) this.held.delete(sid);
  }

  /**
   * Whether a message is held for `sid` (not expired) that `passed` does not
   * pass over — from memory, so the hot path of a send pays no read. Held
   * includes one being stored, one in flight and one in doubt.
   */
  hasHeld(
    sid: string,
    now: number,
    retentionMs: number,
    passed?: (counter: number) => boolean,
  ): boolean {
    if (!this.heldRead.has(sid)) {
      try {
        // Committed rows only: the ones not committed yet are noted already.
        const rows = this.selectHeldAges.all(sid) as { counter: number; sent_at: number }[];
        for (const r of rows) this.noteHeld(sid, r.counter, r.sent_at);
        this.heldRead.add(sid);
      } catch {
        // Unread: say held, which at worst holds a message that could go now.
        return true;
      }
    }
    const rows = this.held.get(sid);
    if (rows === undefined) return false;
    const cutoff = now - retentionMs;
    for (const [counter, sentAt] of rows) {
      // Expired rows are never offered; compaction removes them later.
      if (sentAt <= cutoff) rows.delete(counter);
      else if (passed === undefined || !passed(counter)) return true;
    }
    if (rows.size === 0) this.held.delete(sid);
    return false;
  }

  /** Held messages whose hand-over to a harness the last run did not see
   * end: the harness may have them (DR-0050). */
  inDoubtMessages(): { sid: string; counter: number; message: InboxMessage }[] {
    return [...this.inDoubt].map(([counter, row]) => ({ counter, ...row }));
  }

  /** Settle a message in doubt: delivered (its transcript shows it) or held
   * like any other. Resolves once committed. */
  async settleInDoubt(counter: number, delivered: boolean, now: number): Promise<void> {
    const row = this.inDoubt.get(counter);
    if (row === undefined) return;
    await this.queue.run(() => {
      if (delivered) this.markDelivered.run(now, row.sid, counter);
      else this.clearOffered.run(row.sid, counter);
      this.heldCounts.delete(row.sid);
    });
    if (delivered) this.noteGone(row.sid, [counter]);
    this.inDoubt.delete(counter);
  }

  /** Mark a claimed message as being handed to its harness (route a), before
   * the exchange; resolves once committed. */
  offering(sid: string, counter: number, now: number): Promise<void> {
    return this.queue.run(() => {
      this.markOffered.run(now, sid, counter);
    });
  }

  /** The highest counter ever stored (0 when none), so mids stay increasing
   * across restarts. */
  highestCounter(): number {
    return (this.maxCounter.get() as { n: number | null }).n ?? 0;
  }

  /** Per recipient, the messages held and not yet expired (committed ones):
   * the web console's counts. Recipients with none are left out. */
  heldBySid(now: number, retentionMs: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.countHeldBySid.all(now - retentionMs) as { sid: string; n: number }[])
      out[r.sid] = r.n;
    return out;
  }

  /** Messages held for anyone and not yet expired (committed ones). */
  heldTotal(now: number, retentionMs: number): number {
    return (this.countAllHeld.get(now - retentionMs) as { n: number }).n;
  }

  /**
   * Record a message handed to a plain subscriber's egress queue: delivered
   * when `written()` says its frame already reached the socket by commit time
   * (the common case), else held — recorded delivered once it is written
   * (`settleWritten`), and offered again after a crash before that
   * (DR-0050). Resolves with the state stored, once committed.
   */
  recordHanded(
    sid: string,
    counter: number,
    message: InboxMessage,
    written: () => boolean,
  ): Promise<"held" | "delivered"> {
    const json = JSON.stringify(message);
    return this.queue.run(() => {
      if (written()) {
        this.insert.run(counter, sid, "delivered", json, message.sent_at, message.sent_at);
        return "delivered";
      }
      // In flight: held, but neither counted nor dropped by the limit.
      this.insertInFlight.run(counter, sid, json, message.sent_at, message.sent_at);
      this.noteHeld(sid, counter, message.sent_at);
      return "held";
    });
  }

  /** Record a message handed over at once. */
  recordDelivered(sid: string, counter: number, message: InboxMessage): Promise<void> {
    const json = JSON.stringify(message);
    return this.queue.run(() => {
      this.insert.run(counter, sid, "delivered", json, message.sent_at, message.sent_at);
    });
  }

  /**
   * Hold a message. When that makes more than `max` held (and not expired)
   * for the sid, the oldest is dropped in the same transaction. Resolves once
   * committed, with the mid dropped if one was; rejects when nothing was
   * stored.
   *
   * The count is exact under every fault: it is decided inside the write's
   * transaction. The in-memory count only ever overstates the rows (a write
   * rolled back, a message expired), so it is trusted only below the limit and
   * recounted from the table whenever it says full.
   */
  hold(
    sid: string,
    counter: number,
    message: InboxMessage,
    max: number,
    retentionMs: number,
  ): Promise<{ dropped?: string }> {
    const json = JSON.stringify(message);
    // Held from now on for every send that comes after it.
    this.noteHeld(sid, counter, message.sent_at);
    let droppedCounter: number | undefined;
    return this.queue
      .run(() => {
        const cutoff = message.sent_at - retentionMs;
        this.insert.run(counter, sid, "held", json, message.sent_at, null);
        let n = (this.heldCounts.get(sid) ?? this.count(sid, cutoff) - 1) + 1;
        if (n > max) n = this.count(sid, cutoff);
        let dropped: string | undefined;
        if (n > max) {
          const oldest = this.selectOldest(sid, cutoff);
          this.dropOldestHeld.run(message.sent_at, sid, cutoff);
          droppedCounter = oldest?.counter;
          dropped = oldest?.mid;
          n--;
        }
        this.heldCounts.set(sid, n);
        return dropped === undefined ? {} : { dropped };
      })
      .then(
        (stored) => {
          if (droppedCounter !== undefined) this.noteGone(sid, [droppedCounter]);
          return stored;
        },
        (error: unknown) => {
          this.noteGone(sid, [counter]);
          throw error;
        },
      );
  }

  private count(sid: string, cutoff: number): number {
    return (this.countHeld.get(sid, cutoff) as { n: number }).n;
  }

  private selectOldest(sid: string, cutoff: number): { counter: number; mid: string } | undefined {
    const row = this.selectOldestHeld.get(sid, cutoff) as
      | { counter: number; message: string }
      | undefined;
    if (row === undefined) return undefined;
    return { counter: row.counter, mid: (JSON.parse(row.message) as InboxMessage).mid };
  }

  /** What is held for `sid` (not expired), oldest first, left held: the
   * messages a subscription claims until they reached its socket or its
   * receiver confirms (DR-0024, DR-0050). `undefined` under another process's
   * write lock. */
  peekHeld(sid: string, now: number, retentionMs: number): HeldMessage[] | undefined {
    return this.readNow(() => this.heldRows(sid, now - retentionMs));
  }

  /** `peekHeld` through the group commit (after every accepted write). */
  peekHeldLater(sid: string, now: () => number, retentionMs: number): Promise<HeldMessage[]> {
    return this.queue.run(() => this.heldRows(sid, now() - retentionMs));
  }

  /**
   * Mark held messages delivered, all or none: resolves once committed;
   * rejects (nothing marked) when one of them is no longer held — dropped by
   * an overflow, or taken on another route.
   */
  async settleDelivered(sid: string, counters: readonly number[], now: number): Promise<void> {
    await this.queue.run(() => {
      for (const counter of counters) {
        if (this.markDelivered.run(now, sid, counter).changes !== 1)
          throw new Error(`message ${counter} of ${sid} is no longer held`);
      }
      this.heldCounts.delete(sid);
    });
    this.noteGone(sid, counters);
  }

  /**
   * Record held messages delivered that reached a plain subscriber's socket:
   * each one still held is marked, one no longer held (dropped by an overflow
   * meanwhile) is passed over. Resolves once committed.
   */
  async settleWritten(sid: string, counters: readonly number[], now: number): Promise<void> {
    await this.queue.run(() => {
      for (const counter of counters) this.markDelivered.run(now, sid, counter);
      this.heldCounts.delete(sid);
    });
    this.noteGone(sid, counters);
  }

  /** Run a read after committing what is queued (it must see every
   * accepted message); `undefined` under another process's write lock. */
  private readNow<T>(fn: () => T): T | undefined {
    if (!this.queue.flush()) return undefined;
    try {
      return this.db.transaction(fn).immediate();
    } catch (error) {
      if (isBusyError(error)) return undefined;
      throw error;
    }
  }

  /** Held rows (not expired), oldest first, up to the first that must not
   * leave yet: the one route (a) is handing over (nothing newer may pass it)
   * or one in doubt (settled from its transcript first). */
  private heldRows(sid: string, cutoff: number): HeldMessage[] {
    const claimed = this.claimed.get(sid);
    const out: HeldMessage[] = [];
    for (const r of this.selectHeld.all(sid, cutoff) as { counter: number; message: string }[]) {
      if ((claimed !== undefined && r.counter >= claimed) || this.inDoubt.has(r.counter)) break;
      out.push({ counter: r.counter, message: JSON.parse(r.message) as InboxMessage });
    }
    return out;
  }

  /**
   * Claim the oldest message held for `sid` (not expired), for an offer that
   * hands messages over one at a time and stops at the first that does not
   * get through: until `settleClaim`, no peek or take includes it or anything
   * newer, so it never leaves on two routes and nothing passes it. Commits
   * what is queued first, so it sees every accepted message. `undefined` when
   * nothing is held, the oldest is in `elsewhere` (claimed by a subscriber:
   * the offer waits for it, it never passes it), the sid has a claim already,
   * or another process holds the write lock (everything stays held).
   */
  claimOldest(
    sid: string,
    now: number,
    retentionMs: number,
    elsewhere: ReadonlySet<number>,
  ): HeldMessage | undefined {
    if (this.claimed.has(sid) || !this.queue.flush()) return undefined;
    const oldest = this.heldRows(sid, now - retentionMs)[0];
    if (oldest === undefined || elsewhere.has(oldest.counter)) return undefined;
    this.claimed.set(sid, oldest.counter);
    return oldest;
  }

  /** Route (a) hands a new message (not stored) over: until `dropClaim`, no
   * peek or take includes anything newer. False when the sid has a claim. */
  claimNew(sid: string, counter: number): boolean {
    if (this.claimed.has(sid)) return false;
    this.claimed.set(sid, counter);
    return true;
  }

  /** End `claimNew`'s claim. */
  dropClaim(sid: string, counter: number): void {
    if (this.claimed.get(sid) === counter) this.claimed.delete(sid);
  }

  /** End a claim: a message that got through is recorded delivered (the
   * promise settles once committed); one that did not stays held, its
   * `offering` mark cleared. */
  async settleClaim(sid: string, counter: number, delivered: boolean, now: number): Promise<void> {
    try {
      await this.queue.run(() => {
        if (!delivered) return this.clearOffered.run(sid, counter);
        this.markDelivered.run(now, sid, counter);
        this.heldCounts.delete(sid);
      });
      if (delivered) this.noteGone(sid, [counter]);
    } finally {
      this.claimed.delete(sid);
    }
  }

  /**
   * Compaction: forget settled rows and expired held ones, keeping the highest
   * counter as the mid floor. Expiry itself never writes; this is the one
   * place expired messages leave the file.
   *
   * It runs through the group commit in steps of at most `step` rows by
   * counter, so a file of a million rows never holds the event loop for long
   * and writers go on meanwhile. Only rows up to the floor recorded first are
   * touched: what this run stores later keeps its mids above the floor.
   * Resolves with the number of rows removed; rejects when a step could not be
   * written (another process held the lock past the queue's deadline).
   */
  async compact(now: number, retentionMs: number, step = COMPACT_STEP): Promise<number> {
    const cutoff = now - retentionMs;
    const floor = await this.queue.run(() => {
      const highest = this.highestCounter();
      this.db
        .prepare(
          "INSERT INTO meta (key, value) VALUES ('mid_floor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .run(String(highest));
      return highest;
    });
    const stepEnd = this.db.prepare(
      "SELECT max(counter) AS n FROM (SELECT counter FROM inbox WHERE counter > ? ORDER BY counter LIMIT ?)",
    );
    const remove = this.db.prepare(
      "DELETE FROM inbox WHERE counter > ? AND counter <= ? AND (state != 'held' OR sent_at <= ?)",
    );
    let removed = 0;
    let from = 0;
    while (from < floor && this.db.open) {
      const start = from;
      [from, removed] = await this.queue.run(() => {
        const end = Math.min((stepEnd.get(start, step) as { n: number | null }).n ?? floor, floor);
        return [end, removed + remove.run(start, end, cutoff).changes] as const;
      });
    }
    return removed;
  }

  /** Messages sent between two instants, newest first (at most `limit`),
   * with their recipient: what a transcript's send is matched against
   * (DR-0057). Sees every accepted write; `undefined` under another process's
   * write lock. Delivered rows go at compaction, so an old send finds none. */
  sentBetween(
    since: number,
    until: number,
    limit: number,
  ): { to: string; message: InboxMessage }[] | undefined {
    if (!this.queue.flush()) return undefined;
    try {
      this.selectSent ??= this.db.prepare(
        "SELECT sid, message FROM inbox WHERE sent_at >= ? AND sent_at <= ? ORDER BY counter DESC LIMIT ?",
      );
      const rows = this.selectSent.all(since, until, limit) as { sid: string; message: string }[];
      return rows.map((r) => ({ to: r.sid, message: JSON.parse(r.message) as InboxMessage }));
    } catch (error) {
      if (isBusyError(error)) return undefined;
      throw error;
    }
  }

  /** The counter mids resume from: above every mid this instance ever issued. */
  midFloor(): number {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'mid_floor'").get() as
      | { value: string }
      | undefined;
    return Math.max(Number(row?.value ?? 0), this.highestCounter());
  }
}
