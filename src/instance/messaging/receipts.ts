import { isMid, parseMid, type Sid } from "../../contract/identifiers.js";
import type { Receipt, ReceiptRoute } from "../../contract/receipts.js";
import type { ReceiptEvent } from "../../harness/receipt-evidence.js";
import type { DeliveredRow, InboxStore, ReceiptRow, RouteSide } from "../../store/inbox.js";
import type { Logger } from "../../util/logger.js";
import type { TopicHub } from "../topic-hub.js";
import type { Connection } from "../wire/connection.js";

// Receipts (DR-0054): a delivered message is *seen* once the recipient's
// transcript records it as the model's input, *read* once the model answered
// after it. The search index's worker reads the transcripts and posts what it
// finds (`ReceiptEvent`); this side matches it to delivered rows and stamps
// them. A delivered message the transcript moves on without, or that stays
// unseen for UNSEEN_AFTER_MS while its session is idle, is offered again by
// the other side's routes, and if still unseen its person is told. Nothing on
// the send path waits for any of it, nor pays for it per message: deliveries
// are taken in one batch per turn (one publish), and every wait is a due time
// that one sweep timer checks, never a timer per message.

/** A request formed this long after the delivery without the message proves
 * it lost: within it, the harness may have formed the request already. */
export const MOVED_ON_SLACK_MS = 2000;
/** Unseen after this long while the session is live and idle. */
export const UNSEEN_AFTER_MS = 60_000;
/** A watch on a session that never comes back ends after this many checks. */
const MAX_CHECKS = 30;
/** Sightings of mids not (yet) recorded delivered, kept for the record that
 * follows them (the transcript can be read before the delivery commits). */
const MAX_EARLY = 5000;
/** How often due watches are checked (a watch ends this much late at most). */
const SWEEP_MS = 1000;
/** What a snapshot carries: the newest receipts. */
const SNAPSHOT_RECEIPTS = 100;

/** Where the evidence comes from (the search index, DR-0037). */
export interface EvidenceSource {
  onReceipts(listener: (events: ReceiptEvent[]) => void): void;
  /** Why no receipt can come now, or undefined. */
  receiptsUnavailable(): string | undefined;
}

export interface ReceiptsDeps {
  instanceId: string;
  inbox: InboxStore;
  hub: TopicHub;
  log: Logger;
  evidence: EvidenceSource | undefined;
  /** Whether the session is live now. */
  live(sid: Sid): boolean;
  /** What to call a session in a person's notification. */
  label(sid: Sid): string;
  /** The message was held again for the other side's routes: offer it. */
  reoffer(sid: Sid): void;
  /** Tell the person. */
  notify(sid: Sid, text: string): void;
}

/** One delivered message waited on. */
interface Watch {
  sid: Sid;
  counter: number;
  route: ReceiptRoute;
  /** Wall-clock time of the delivery, as transcripts stamp theirs. */
  at: number;
  /** Offered again already (a second loss tells the person). */
  again: boolean;
  checks: number;
  /** When it is checked next (Date.now() time). */
  due: number;
  /** Why it was offered again (a re-offered one's). */
  why?: string;
}

export class Receipts {
  /** Delivered messages waited on, in the order they fall due (every wait
   * is UNSEEN_AFTER_MS, and a watch armed again moves to the end). */
  private readonly watched = new Map<number, Watch>();
  /** Re-offered messages not delivered again yet, in the order they fall
   * due: their person is told then. */
  private readonly reoffered = new Map<number, Watch>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Delivered rows told this turn, taken together after it. */
  private arrived: DeliveredRow[] = [];
  private readonly early = new Map<number, { sid: string; at: number; readAt?: number }>();
  private readonly idle = new Map<Sid, boolean>();
  /** `receipts:<sid>` names held now. */
  private readonly heldNames = new Set<string>();

  constructor(private readonly d: ReceiptsDeps) {
    // After the turn, all of its deliveries at once: the sends that recorded
    // them answer first (a tick queued from a microtask runs once every
    // microtask queued before it has, their replies among them). Not an
    // immediate: one in flight, that cost a turn of the event loop per message.
    d.inbox.onDelivered((rows) => {
      if (this.arrived.length === 0)
        queueMicrotask(() => process.nextTick(() => this.takeArrived()));
      for (const row of rows) this.arrived.push(row);
    });
    d.evidence?.onReceipts((events) => {
      for (const e of events) this.evidence(e);
    });
    d.hub.provideSnapshot("receipts", (conn, param) => this.snapshot(conn, param));
    d.hub.onHeld((name, count) => {
      if (!name.startsWith("receipts:")) return;
      if (count > 0) this.heldNames.add(name);
      else this.heldNames.delete(name);
    });
  }

  /** The receipts of these mids, a session's own sends only. */
  read(mids: readonly string[], from: Sid | undefined): Receipt[] {
    const counters = mids.flatMap((m) => {
      const p = isMid(m) ? parseMid(m) : undefined;
      return p?.instance === this.d.instanceId ? [p.counter] : [];
    });
    const rows = this.d.inbox.receiptRows(counters);
    return rows.filter((r) => from === undefined || r.message.from === from).map((r) => this.of(r));
  }

  /** The newest receipts of `from`'s sends (every sender's when undefined). */
  recent(from: Sid | undefined, limit = SNAPSHOT_RECEIPTS): Receipt[] {
    return this.d.inbox.recentReceipts(from, limit).map((r) => this.of(r));
  }

  private snapshot(conn: Connection, param: string | undefined): { receipts: Receipt[] } {
    const identity = conn.identity;
    // A session holds only `receipts:<its sid>` (the subscribe op checks).
    const from = identity?.role === "session" ? identity.sid : param;
    return { receipts: this.recent(from).reverse() };
  }

  /** A row as a receipt. */
  private of(r: ReceiptRow): Receipt {
    const out: Receipt = {
      mid: r.message.mid,
      to: r.sid,
      from: r.message.from,
      sent_at: r.message.sent_at,
      state: "held",
    };
    if (r.route !== null) out.route = r.route;
    if (r.seen_at !== null) out.seen_at = r.seen_at;
    if (r.read_at !== null) out.read_at = r.read_at;
    if (r.state === "delivered" && r.settled_at !== null) out.delivered_at = r.settled_at;
    if (r.state === "dropped") out.state = "dropped";
    else if (r.read_at !== null) out.state = "read";
    else if (r.seen_at !== null) out.state = "seen";
    else if (r.unseen !== null) {
      out.state = "unseen";
      out.why = r.unseen;
    } else if (r.state === "delivered") {
      out.state = "delivered";
      const why = this.d.evidence?.receiptsUnavailable() ?? this.noEvidence();
      if (why !== undefined) out.why = `no receipt can come: ${why}`;
    }
    return out;
  }

  private noEvidence(): string | undefined {
    return this.d.evidence === undefined ? "this instance reads no transcripts" : undefined;
  }

  /** Publish the receipts of these counters to whoever holds them. */
  private publish(counters: readonly number[]): void {
    const { hub } = this.d;
    if (counters.length === 0 || hub.count("receipts") + this.sessionHolders() === 0) return;
    const receipts = this.d.inbox.receiptRows(counters).map((r) => this.of(r));
    if (receipts.length === 0) return;
    hub.publish("receipts", { receipts });
    const bySender = new Map<string, Receipt[]>();
    for (const r of receipts) {
      const list = bySender.get(r.from);
      if (list === undefined) bySender.set(r.from, [r]);
      else list.push(r);
    }
    for (const [from, list] of bySender)
      if (this.heldNames.has(`receipts:${from}`))
        hub.publish(`receipts:${from}`, { receipts: list });
  }

  /** How many `receipts:<sid>` names someone holds. */
  private sessionHolders(): number {
    return this.heldNames.size;
  }

  private takeArrived(): void {
    const rows = this.arrived;
    this.arrived = [];
    const publish: number[] = [];
    for (const row of rows) if (this.delivered(row)) publish.push(row.counter);
    this.publish(publish);
  }

  /** Watch a delivered message; true when its receipt is to be published
   * (a sighting that came first stamps and publishes it itself). */
  private delivered(row: DeliveredRow): boolean {
    const early = this.early.get(row.counter);
    this.early.delete(row.counter);
    const was = this.reoffered.get(row.counter);
    this.reoffered.delete(row.counter);
    if (early !== undefined && early.sid === row.sid) {
      void this.stamp(row.sid, row.counter, early.at, early.readAt);
      return false;
    }
    // Parked for its person: stamped when it shows, never judged lost. Typed:
    // no envelope to look for, and offering it again would type it twice.
    if (row.parked || row.route === "typed") return true;
    const now = Date.now();
    this.clearWatch(row.counter);
    this.arm(this.watched, {
      sid: row.sid,
      counter: row.counter,
      route: row.route,
      at: now,
      again: was !== undefined,
      checks: 0,
      due: now + UNSEEN_AFTER_MS,
    });
    return true;
  }

  /** Wait on `w` until its due time: at the end of `list`, which is in due
   * order; the sweep runs while anything waits. */
  private arm(list: Map<number, Watch>, w: Watch): void {
    list.delete(w.counter);
    list.set(w.counter, w);
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweepTimer.unref();
  }

  /** Check what fell due, oldest first; stop sweeping once nothing waits. */
  private sweep(): void {
    const now = Date.now();
    for (const w of this.watched.values()) {
      if (w.due > now) break;
      this.check(w);
    }
    for (const w of this.reoffered.values()) {
      if (w.due > now) break;
      this.reoffered.delete(w.counter);
      this.tell(w, this.midOf(w), `${w.why}; offered again, no other route took it`);
    }
    if (this.watched.size === 0 && this.reoffered.size === 0) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  }

  private midOf(w: Watch): string {
    return `${this.d.instanceId}/${w.counter}`;
  }

  private clearWatch(counter: number): void {
    this.watched.delete(counter);
  }

  /** UNSEEN_AFTER_MS passed: unseen when the session is live and idle and
   * the evidence flows; otherwise look again later. */
  private check(w: Watch): void {
    if (this.watched.get(w.counter) !== w) return;
    const noEvidence = this.d.evidence === undefined || this.d.evidence.receiptsUnavailable();
    // Idle as its own transcript last said: a session whose transcript the
    // index has not read an answer of gives no evidence either way.
    if (!noEvidence && this.d.live(w.sid) && this.idle.get(w.sid) === true) {
      void this.unseen(w, `not seen in ${UNSEEN_AFTER_MS / 1000} s while the session was idle`);
      return;
    }
    if (++w.checks >= MAX_CHECKS) this.clearWatch(w.counter);
    else {
      w.due = Date.now() + UNSEEN_AFTER_MS;
      this.arm(this.watched, w);
    }
  }

  private evidence(e: ReceiptEvent): void {
    if (e.kind === "state") {
      this.idle.set(e.sid, e.idle);
      return;
    }
    if (e.kind === "turn") {
      // Not for `codex queue`: when Codex hands a queued message to the model
      // (the next tool output, or the turn after) is not verified, and
      // guessing early would show it twice; the idle rule still applies.
      for (const w of [...this.watched.values()])
        if (w.sid === e.sid && w.route !== "codex" && e.inputsAt > w.at + MOVED_ON_SLACK_MS)
          void this.unseen(w, "its model answered a request formed after the delivery without it");
      return;
    }
    const p = parseMid(e.mid);
    if (p.instance !== this.d.instanceId) return;
    if (e.kind === "read") {
      const early = this.early.get(p.counter);
      if (early !== undefined && early.sid === e.sid) early.readAt = e.at;
      else void this.stamp(e.sid, p.counter, undefined, e.at);
      return;
    }
    const w = this.watched.get(p.counter);
    // Another session's transcript quoting the envelope stamps nothing.
    if (w !== undefined && w.sid !== e.sid) return;
    this.clearWatch(p.counter);
    void this.stamp(e.sid, p.counter, e.at, undefined).then((stamped) => {
      if (stamped || this.watched.has(p.counter)) return;
      // Not delivered (yet): the delivery's record may follow.
      this.early.set(p.counter, { sid: e.sid, at: e.at });
      if (this.early.size > MAX_EARLY) this.early.delete(this.early.keys().next().value!);
    });
  }

  /** A typed message's turn was found in the transcript (DR-0055). */
  typedSeen(sid: Sid, counter: number, at: number): Promise<boolean> {
    return this.stamp(sid, counter, at, undefined);
  }

  /** Stamp seen and/or read; resolves with whether seen was stamped. */
  private async stamp(
    sid: Sid,
    counter: number,
    seenAt: number | undefined,
    readAt: number | undefined,
  ): Promise<boolean> {
    try {
      const seen = seenAt !== undefined && (await this.d.inbox.stampSeen(sid, counter, seenAt));
      if (seen) {
        this.clearWatch(counter);
        this.reoffered.delete(counter);
      }
      const read = readAt !== undefined && (await this.d.inbox.stampRead(sid, counter, readAt));
      if (seen || read) this.publish([counter]);
      return seen;
    } catch (error) {
      this.d.log.warn({ err: error, sid, counter }, "receipt not stamped");
      return false;
    }
  }

  /** The message looks lost: offered again by the other side's routes, or,
   * lost a second time, its person is told. */
  private async unseen(w: Watch, why: string): Promise<void> {
    this.clearWatch(w.counter);
    const mid = this.midOf(w);
    const side: RouteSide = w.route === "socket" || w.route === "codex" ? "direct" : "lane";
    try {
      if (w.again) {
        if (await this.d.inbox.markUnseen(w.sid, w.counter, why, undefined)) {
          this.tell(w, mid, `${why}, also when offered again`);
          this.publish([w.counter]);
        }
        return;
      }
      const other = side === "direct" ? "its waiter or hook" : "its harness's socket";
      if (
        !(await this.d.inbox.markUnseen(
          w.sid,
          w.counter,
          `${why}; offered again through ${other}`,
          side,
        ))
      )
        return;
      this.d.log.info({ sid: w.sid, mid, route: w.route, why }, "message unseen: offered again");
      this.publish([w.counter]);
      const due = Date.now() + UNSEEN_AFTER_MS;
      this.arm(this.reoffered, { ...w, again: true, checks: 0, due, why });
      this.d.reoffer(w.sid);
    } catch (error) {
      this.d.log.warn({ err: error, sid: w.sid, mid }, "unseen message not recorded");
    }
  }

  private tell(w: Watch, mid: string, why: string): void {
    this.d.log.warn({ sid: w.sid, mid, why }, "message not seen by its recipient's model");
    this.d.notify(
      w.sid,
      `message ${mid} to ${this.d.label(w.sid)} was not seen by its model: ${why}`,
    );
  }

  dispose(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.watched.clear();
    this.reoffered.clear();
  }
}
