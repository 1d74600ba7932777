import type BetterSqlite3 from "better-sqlite3";
import type { InboxMessage } from "../contract/messaging.js";
import type { ReceiptRoute } from "../contract/receipts.js";
import type { CommitQueue } from "./commit-queue.js";
import { type Db, isBusyError } from "./database.js";
import {
  INBOX_STATE,
  MESSAGE_SQL,
  ROUTE_CODE,
  ROUTE_SQL,
  rowFields,
  SID_SQL,
  STATE_SQL,
} from "./migrations/0015-inbox-compact.js";

/** A held message with its per-instance counter (the number in its mid). */
export interface HeldMessage {
  counter: number;
  message: InboxMessage;
}

/** Rows one compaction step looks at: ~1 ms of work per step. */
const COMPACT_STEP = 2000;
/** Delivered rows are kept this long after delivery, for their receipts
 * (`ccmsg sent`, the console; DR-0054)… */
export const RECEIPT_KEEP_MS = 24 * 3600 * 1000;
/** …and at most this many of them, newest kept. */
export const RECEIPT_KEEP_ROWS = 20_000;

/** A message handed over: told once its record is committed. */
export interface DeliveredRow {
  sid: string;
  counter: number;
  route: ReceiptRoute;
  at: number;
  /** The harness keeps it for its person to release (Claude Code's
   * `crossSessionInbound` hold): not seen until then, and never to be
   * offered around that gate. */
  parked?: true;
}

/** Which routes a held row goes by: route (a) into the harness, or the
 * `inbox` lane's receivers (a waiter, a hook, a subscriber). A row the
 * transcript showed lost on one is offered again only by the other. */
export type RouteSide = "direct" | "lane";

/** What a receipt is made of, as stored. */
export interface ReceiptRow {
  counter: number;
  sid: string;
  state: string;
  message: InboxMessage;
  settled_at: number | null;
  route: ReceiptRoute | null;
  seen_at: number | null;
  read_at: number | null;
  unseen: string | null;
}

/** A receipt's columns, over `inbox_rows r`. */
const RECEIPT_COLUMNS = `r.counter, ${SID_SQL} AS sid, ${STATE_SQL} AS state, ${MESSAGE_SQL} AS message,
  r.settled_at, ${ROUTE_SQL} AS route, r.seen_at, r.read_at, r.unseen`;

/** A name's id in `inbox_names`, for a statement's `?` (DR-0063): a name
 * never stored matches no row. */
const NAMED = "(SELECT id FROM inbox_names WHERE name = ?)";
const { held: HELD, delivered: DELIVERED, dropped: DROPPED } = INBOX_STATE;

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
  private readonly findName;
  private readonly addName;
  /** `inbox_names` ids by name, as committed: a send to a known recipient
   * from a known sender is one INSERT. A name is learned inside a write
   * (`learning`) and kept only once that write is committed, so a write
   * undone never leaves an id that names nothing. */
  private readonly nameIds = new Map<string, number>();
  private learning: [string, number][] | undefined;
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
  private readonly deliveredListeners: ((rows: DeliveredRow[]) => void)[] = [];
  private readonly selectMessage;
  /** Prepared on first use: only transcripts' sends read it (DR-0057). */
  private selectRecent: BetterSqlite3.Statement | undefined;
  private selectSent: BetterSqlite3.Statement<[string, number, number, number]> | undefined;
  private selectReceipts: BetterSqlite3.Statement<[string]> | undefined;
  private forgetUnused: BetterSqlite3.Statement<[{ id: number }]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly queue: CommitQueue,
  ) {
    this.insert = db.prepare(
      `INSERT INTO inbox_rows (counter, sid, state, origin, sender, label, text, sent_at,
         settled_at, route, reply_to, offered_at, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.findName = db.prepare("SELECT id FROM inbox_names WHERE name = ?").pluck();
    this.addName = db.prepare("INSERT INTO inbox_names (name) VALUES (?)");
    this.dropOldestHeld = db.prepare(
      `UPDATE inbox_rows SET state = ${DROPPED}, settled_at = ?
       WHERE counter = (SELECT min(counter) FROM inbox_rows WHERE sid = ${NAMED} AND state = ${HELD} AND offered_at IS NULL AND sent_at > ?)`,
    );
    this.selectHeld = db.prepare(
      `SELECT r.counter, ${MESSAGE_SQL} AS message, r.avoid FROM inbox_rows r
       WHERE r.sid = ${NAMED} AND r.state = ${HELD} AND r.sent_at > ? ORDER BY r.counter`,
    );
    this.markDelivered = db.prepare(
      // Delivered (again): a loss noted before is history.
      `UPDATE inbox_rows SET state = ${DELIVERED}, settled_at = ?, route = ?, unseen = NULL, avoid = NULL
       WHERE sid = ${NAMED} AND state = ${HELD} AND counter = ?`,
    );
    // What the per-recipient limit counts and drops: held messages not in
    // flight (a frame on its way to a socket or a harness has `offered_at`).
    this.countHeld = db.prepare(
      `SELECT count(*) AS n FROM inbox_rows WHERE sid = ${NAMED} AND state = ${HELD} AND offered_at IS NULL AND sent_at > ?`,
    );
    this.selectOldestHeld = db.prepare(
      `SELECT r.counter, ${MESSAGE_SQL} AS message FROM inbox_rows r
       WHERE r.sid = ${NAMED} AND r.state = ${HELD} AND r.offered_at IS NULL AND r.sent_at > ? ORDER BY r.counter LIMIT 1`,
    );
    this.maxCounter = db.prepare("SELECT max(counter) AS n FROM inbox_rows");
    this.selectHeldAges = db.prepare(
      `SELECT counter, sent_at FROM inbox_rows WHERE sid = ${NAMED} AND state = ${HELD}`,
    );
    this.countAllHeld = db.prepare(
      `SELECT count(*) AS n FROM inbox_rows WHERE state = ${HELD} AND sent_at > ?`,
    );
    this.countHeldBySid = db.prepare(
      `SELECT ${SID_SQL} AS sid, count(*) AS n FROM inbox_rows r WHERE r.state = ${HELD} AND r.sent_at > ? GROUP BY r.sid`,
    );
    this.markOffered = db.prepare(
      `UPDATE inbox_rows SET offered_at = ? WHERE sid = ${NAMED} AND state = ${HELD} AND counter = ?`,
    );
    this.clearOffered = db.prepare(
      `UPDATE inbox_rows SET offered_at = NULL WHERE sid = ${NAMED} AND state = ${HELD} AND counter = ?`,
    );
    this.selectMessage = db.prepare(
      `SELECT ${MESSAGE_SQL} AS message FROM inbox_rows r WHERE r.counter = ? AND r.sid = ${NAMED}`,
    );
    const doubtful = db
      .prepare(
        `SELECT r.counter, ${SID_SQL} AS sid, ${MESSAGE_SQL} AS message FROM inbox_rows r
         WHERE r.offered_at IS NOT NULL AND r.state = ${HELD}`,
      )
      .all() as { counter: number; sid: string; message: string }[];
    for (const r of doubtful)
      this.inDoubt.set(r.counter, { sid: r.sid, message: JSON.parse(r.message) as InboxMessage });
  }

  /** A name's id, stored now when it is new (inside a write: `write`). */
  private nameId(name: string): number {
    const known = this.nameIds.get(name);
    if (known !== undefined) return known;
    const id =
      (this.findName.get(name) as number | undefined) ??
      Number(this.addName.run(name).lastInsertRowid);
    this.learning?.push([name, id]);
    return id;
  }

  /** Queue a write that may store names: their ids are kept once it is
   * committed. */
  private write<T>(fn: () => T): Promise<T> {
    const learned: [string, number][] = [];
    return this.queue
      .run(() => {
        // A batch the lock kept waiting runs again: only its last run counts.
        learned.length = 0;
        this.learning = learned;
        try {
          return fn();
        } finally {
          this.learning = undefined;
        }
      })
      .then((value) => {
        for (const [name, id] of learned) this.nameIds.set(name, id);
        return value;
      });
  }

  /** Store one message's row (inside a write). */
  private put(
    sid: string,
    counter: number,
    message: InboxMessage,
    state: number,
    route: ReceiptRoute | null,
    offeredAt: number | null = null,
  ): void {
    const f = rowFields(counter, message.sent_at, message);
    this.insert.run(
      counter,
      this.nameId(sid),
      state,
      f.origin === null ? null : this.nameId(f.origin),
      this.nameId(f.sender),
      this.nameId(f.label),
      f.text,
      message.sent_at,
      state === DELIVERED ? message.sent_at : null,
      route === null ? null : ROUTE_CODE[route],
      f.reply_to,
      offeredAt,
      f.message,
    );
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

  /** The message numbered `counter` that was addressed to `sid`, while the
   * file still has it (compaction forgets delivered ones). */
  messageTo(sid: string, counter: number): InboxMessage | undefined {
    const row = this.selectMessage.get(counter, sid) as { message: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.message) as InboxMessage);
  }

  /** Held messages whose hand-over to a harness the last run did not see
   * end: the harness may have them (DR-0050). */
  inDoubtMessages(): { sid: string; counter: number; message: InboxMessage }[] {
    return [...this.inDoubt].map(([counter, row]) => ({ counter, ...row }));
  }

  /** Settle a message in doubt: delivered (its transcript shows it) or held
   * like any other. Resolves once committed. */
  async settleInDoubt(
    counter: number,
    delivered: boolean,
    now: number,
    route: ReceiptRoute = "socket",
  ): Promise<void> {
    const row = this.inDoubt.get(counter);
    if (row === undefined) return;
    await this.queue.run(() => {
      if (delivered) this.markDelivered.run(now, ROUTE_CODE[route], row.sid, counter);
      else this.clearOffered.run(row.sid, counter);
      this.heldCounts.delete(row.sid);
    });
    if (delivered) {
      this.noteGone(row.sid, [counter]);
      this.told([{ sid: row.sid, counter, route, at: now }]);
    }
    this.inDoubt.delete(counter);
  }

  /** Be told of every message recorded delivered, once committed (the
   * receipts watch for its transcript record). */
  onDelivered(listener: (rows: DeliveredRow[]) => void): void {
    this.deliveredListeners.push(listener);
  }

  private told(rows: DeliveredRow[]): void {
    if (rows.length === 0) return;
    for (const l of this.deliveredListeners) l(rows);
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
  async recordHanded(
    sid: string,
    counter: number,
    message: InboxMessage,
    written: () => boolean,
  ): Promise<"held" | "delivered"> {
    const route: ReceiptRoute = "subscriber";
    const state = await this.write(() => {
      if (written()) {
        this.put(sid, counter, message, DELIVERED, route);
        return "delivered" as const;
      }
      // In flight: held, but neither counted nor dropped by the limit.
      this.put(sid, counter, message, HELD, null, message.sent_at);
      this.noteHeld(sid, counter, message.sent_at);
      return "held" as const;
    });
    if (state === "delivered") this.told([{ sid, counter, route, at: message.sent_at }]);
    return state;
  }

  /** Record a message handed over at once. */
  async recordDelivered(
    sid: string,
    counter: number,
    message: InboxMessage,
    route: ReceiptRoute = "socket",
    parked = false,
  ): Promise<void> {
    await this.write(() => this.put(sid, counter, message, DELIVERED, route));
    const at = message.sent_at;
    this.told([{ sid, counter, route, at, ...(parked ? { parked: true as const } : {}) }]);
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
    // Held from now on for every send that comes after it.
    this.noteHeld(sid, counter, message.sent_at);
    let droppedCounter: number | undefined;
    return this.write(() => {
      const cutoff = message.sent_at - retentionMs;
      this.put(sid, counter, message, HELD, null);
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
    }).then(
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
    return this.readNow(() => this.heldRows(sid, now - retentionMs, "lane"));
  }

  /** `peekHeld` through the group commit (after every accepted write). */
  peekHeldLater(sid: string, now: () => number, retentionMs: number): Promise<HeldMessage[]> {
    return this.queue.run(() => this.heldRows(sid, now() - retentionMs, "lane"));
  }

  /**
   * Mark held messages delivered, all or none: resolves once committed;
   * rejects (nothing marked) when one of them is no longer held — dropped by
   * an overflow, or taken on another route.
   */
  async settleDelivered(
    sid: string,
    counters: readonly number[],
    now: number,
    route: ReceiptRoute = "waiter",
  ): Promise<void> {
    await this.queue.run(() => {
      for (const counter of counters) {
        if (this.markDelivered.run(now, ROUTE_CODE[route], sid, counter).changes !== 1)
          throw new Error(`message ${counter} of ${sid} is no longer held`);
      }
      this.heldCounts.delete(sid);
    });
    this.noteGone(sid, counters);
    this.told(counters.map((counter) => ({ sid, counter, route, at: now })));
  }

  /**
   * Record held messages delivered that reached a plain subscriber's socket:
   * each one still held is marked, one no longer held (dropped by an overflow
   * meanwhile) is passed over. Resolves once committed.
   */
  async settleWritten(sid: string, counters: readonly number[], now: number): Promise<void> {
    const route: ReceiptRoute = "subscriber";
    const marked = await this.queue.run(() => {
      const code = ROUTE_CODE[route];
      const out = counters.filter((c) => this.markDelivered.run(now, code, sid, c).changes === 1);
      this.heldCounts.delete(sid);
      return out;
    });
    this.noteGone(sid, counters);
    this.told(marked.map((counter) => ({ sid, counter, route, at: now })));
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
  private heldRows(sid: string, cutoff: number, by: RouteSide): HeldMessage[] {
    const claimed = this.claimed.get(sid);
    const out: HeldMessage[] = [];
    const rows = this.selectHeld.all(sid, cutoff) as {
      counter: number;
      message: string;
      avoid: string | null;
    }[];
    for (const r of rows) {
      if ((claimed !== undefined && r.counter >= claimed) || this.inDoubt.has(r.counter)) break;
      // Lost on this side once: the other side offers it, nothing passes it.
      if (r.avoid === by) break;
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
    const oldest = this.heldRows(sid, now - retentionMs, "direct")[0];
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
  async settleClaim(
    sid: string,
    counter: number,
    delivered: boolean,
    now: number,
    route: ReceiptRoute = "socket",
    parked = false,
  ): Promise<void> {
    try {
      await this.queue.run(() => {
        if (!delivered) return this.clearOffered.run(sid, counter);
        this.markDelivered.run(now, ROUTE_CODE[route], sid, counter);
        this.heldCounts.delete(sid);
      });
      if (delivered) {
        this.noteGone(sid, [counter]);
        this.told([{ sid, counter, route, at: now, ...(parked ? { parked: true as const } : {}) }]);
      }
    } finally {
      this.claimed.delete(sid);
    }
  }

  /** The stored rows of these counters (a receipt each). Commits what is
   * queued first, so a message just sent is among them. */
  receiptRows(counters: readonly number[]): ReceiptRow[] {
    if (counters.length === 0) return [];
    this.queue.flush();
    // One statement for any number of counters, prepared once: the receipts
    // of each turn's deliveries are read through it.
    this.selectReceipts ??= this.db.prepare(
      `SELECT ${RECEIPT_COLUMNS} FROM inbox_rows r
       WHERE r.counter IN (SELECT value FROM json_each(?)) ORDER BY r.counter`,
    );
    const rows = this.selectReceipts.all(JSON.stringify(counters)) as (Omit<
      ReceiptRow,
      "message"
    > & { message: string })[];
    return rows.map(parseReceiptRow);
  }

  /** The newest `limit` rows sent by `from` (every sender's when
   * undefined), newest first. */
  recentReceipts(from: string | undefined, limit: number): ReceiptRow[] {
    this.queue.flush();
    // A sender's: a scan of the rows kept (about 1.5 ms at the 20,000 cap),
    // read when a sender's receipts are first held, not per message.
    this.selectRecent ??= this.db.prepare(
      `SELECT ${RECEIPT_COLUMNS} FROM inbox_rows r
       WHERE @from IS NULL OR r.sender = (SELECT id FROM inbox_names WHERE name = @from)
       ORDER BY r.counter DESC LIMIT @limit`,
    );
    const rows = this.selectRecent.all({ from: from ?? null, limit }) as (Omit<
      ReceiptRow,
      "message"
    > & {
      message: string;
    })[];
    return rows.map(parseReceiptRow);
  }

  /**
   * The recipient's transcript shows the message as the model's input at
   * `at`: stamp it — only a row of that very session (a mid quoted in
   * another session's transcript stamps nothing), and only once. A row held
   * again because it looked lost is settled delivered by it (its first
   * delivery arrived late): it is not offered a second time. Resolves with
   * whether a row was stamped.
   */
  async stampSeen(sid: string, counter: number, at: number): Promise<boolean> {
    const settled = { held: false };
    const changed = await this.queue.run(() => {
      const delivered = this.db
        .prepare(
          `UPDATE inbox_rows SET seen_at = ?
           WHERE counter = ? AND sid = ${NAMED} AND state = ${DELIVERED} AND seen_at IS NULL`,
        )
        .run(at, counter, sid).changes;
      if (delivered === 1 || this.claimed.get(sid) === counter) return delivered;
      const held = this.db
        .prepare(
          `UPDATE inbox_rows SET seen_at = ?, state = ${DELIVERED}, settled_at = ?, avoid = NULL
           WHERE counter = ? AND sid = ${NAMED} AND state = ${HELD} AND unseen IS NOT NULL AND offered_at IS NULL`,
        )
        .run(at, at, counter, sid).changes;
      settled.held = held === 1;
      if (settled.held) this.heldCounts.delete(sid);
      return held;
    });
    if (settled.held) this.noteGone(sid, [counter]);
    return changed === 1;
  }

  /** The model answered after seeing the message (`at`): stamp it once. */
  async stampRead(sid: string, counter: number, at: number): Promise<boolean> {
    const changed = await this.queue.run(
      () =>
        this.db
          .prepare(
            `UPDATE inbox_rows SET read_at = ?
             WHERE counter = ? AND sid = ${NAMED} AND seen_at IS NOT NULL AND read_at IS NULL`,
          )
          .run(at, counter, sid).changes,
    );
    return changed === 1;
  }

  /**
   * A delivered message the recipient's transcript moved on without: record
   * `why`, and with `reoffer`, hold it again for the other side's routes
   * only (`avoid`), oldest first among what is held. Resolves with whether
   * the row was still delivered and unseen.
   */
  async markUnseen(
    sid: string,
    counter: number,
    why: string,
    reoffer: RouteSide | undefined,
  ): Promise<boolean> {
    const row = await this.queue.run(() => {
      const r = this.db
        .prepare(
          `SELECT sent_at FROM inbox_rows
           WHERE counter = ? AND sid = ${NAMED} AND state = ${DELIVERED} AND seen_at IS NULL`,
        )
        .get(counter, sid) as { sent_at: number } | undefined;
      if (r === undefined) return undefined;
      if (reoffer === undefined)
        this.db.prepare("UPDATE inbox_rows SET unseen = ? WHERE counter = ?").run(why, counter);
      else {
        this.db
          .prepare(
            `UPDATE inbox_rows SET unseen = ?, avoid = ?, state = ${HELD}, settled_at = NULL WHERE counter = ?`,
          )
          .run(why, reoffer, counter);
        this.heldCounts.delete(sid);
      }
      return r;
    });
    if (row !== undefined && reoffer !== undefined) this.noteHeld(sid, counter, row.sent_at);
    return row !== undefined;
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
      "SELECT max(counter) AS n FROM (SELECT counter FROM inbox_rows WHERE counter > ? ORDER BY counter LIMIT ?)",
    );
    // Delivered rows stay a day for their receipts, the newest
    // RECEIPT_KEEP_ROWS of them at most; held ones until they expire.
    const keptFrom = (
      this.db
        .prepare(
          `SELECT counter FROM inbox_rows WHERE state = ${DELIVERED} ORDER BY counter DESC LIMIT 1 OFFSET ?`,
        )
        .get(RECEIPT_KEEP_ROWS) as { counter: number } | undefined
    )?.counter;
    const keepAfter = now - RECEIPT_KEEP_MS;
    const remove = this.db.prepare(
      `DELETE FROM inbox_rows WHERE counter > ? AND counter <= ? AND (
         (state = ${HELD} AND sent_at <= ?) OR state NOT IN (${HELD}, ${DELIVERED})
         OR (state = ${DELIVERED} AND (coalesce(settled_at, sent_at) <= ? OR counter <= ?)))
       RETURNING sid, sender, label, origin`,
    );
    let removed = 0;
    let from = 0;
    // The names the removed rows referred to: each may now name nothing.
    const named = new Set<number>();
    while (from < floor && this.db.open) {
      const start = from;
      [from, removed] = await this.queue.run(() => {
        const end = Math.min((stepEnd.get(start, step) as { n: number | null }).n ?? floor, floor);
        const gone = remove.all(start, end, cutoff, keepAfter, keptFrom ?? 0) as {
          sid: number;
          sender: number;
          label: number;
          origin: number | null;
        }[];
        for (const r of gone) {
          named.add(r.sid).add(r.sender).add(r.label);
          if (r.origin !== null) named.add(r.origin);
        }
        return [end, removed + gone.length] as const;
      });
    }
    for (const id of named) {
      if (!this.db.open) break;
      await this.queue.run(() => this.forgetName(id));
    }
    return removed;
  }

  /**
   * Drop a name no row refers to any more (a step of compaction: one scan of
   * the rows at most). Every id learned goes with it, and a later write looks
   * its names up again. A write committed before this step that learned a
   * name refers to it, so that id, kept once the write's promise settles,
   * stays right.
   */
  private forgetName(id: number): void {
    this.forgetUnused ??= this.db.prepare(
      `DELETE FROM inbox_names WHERE id = @id AND NOT EXISTS (SELECT 1 FROM inbox_rows
         WHERE sid = @id OR sender = @id OR label = @id OR origin = @id)`,
    );
    if (this.forgetUnused.run({ id }).changes > 0) this.nameIds.clear();
  }

  /** Messages `from` sent between two instants, newest first (at most
   * `limit`), with their recipient: what a transcript's send is matched
   * against (DR-0057). Sees every accepted write; `undefined` under another
   * process's write lock. Delivered rows go at compaction, so an old send
   * finds none. */
  sentBetween(
    from: string,
    since: number,
    until: number,
    limit: number,
  ): { to: string; message: InboxMessage }[] | undefined {
    if (!this.queue.flush()) return undefined;
    try {
      this.selectSent ??= this.db.prepare(
        `SELECT ${SID_SQL} AS sid, ${MESSAGE_SQL} AS message FROM inbox_rows r
         WHERE r.sender = ${NAMED} AND r.sent_at >= ? AND r.sent_at <= ?
         ORDER BY r.counter DESC LIMIT ?`,
      );
      const rows = this.selectSent.all(from, since, until, limit) as {
        sid: string;
        message: string;
      }[];
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

function parseReceiptRow(r: Omit<ReceiptRow, "message"> & { message: string }): ReceiptRow {
  return { ...r, message: JSON.parse(r.message) as InboxMessage };
}
