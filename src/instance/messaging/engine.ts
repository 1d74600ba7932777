import type { HandOverMode } from "../../contract/connect.js";
import { INBOX_MAX_PER_SID, INBOX_RETENTION_MS } from "../../contract/constants.js";
import { ContractError, contractError } from "../../contract/errors.js";
import { isMid, parseMid, type Sender, type Sid } from "../../contract/identifiers.js";
import type {
  InboxMessage,
  MessageSendArgs,
  MessageSendResult,
  Notification,
} from "../../contract/messaging.js";
import {
  NOTIFICATION_QUOTE_MAX_CHARS,
  type StoredNotification,
} from "../../contract/notifications.js";
import { type CandidateSession, type LastLiveSession, lostStateOf } from "../../contract/peers.js";
import type { InboxStore } from "../../store/inbox.js";
import type { NotificationsStore } from "../../store/notifications.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import type { Connection } from "../wire/connection.js";
import { DirectRoute, type DirectRouteName, type DirectSetup } from "./direct-route.js";
import { type Claimant, HandOvers } from "./hand-overs.js";
import { type InboxDelivery, InboxLane } from "./inbox-lane.js";
import { type EvidenceSource, Receipts } from "./receipts.js";
import { TypedRoute } from "./typed-route.js";

/** Told of every message sent and notification raised (the search index). */
export interface MessagingObserver {
  message(to: Sid, message: InboxMessage): void;
  notification(note: Notification): void;
}

/** Adds candidates live on other instances (the mesh's rows). */
export type CandidatesElsewhere = (
  row: LastLiveSession,
  local: CandidateSession[],
) => CandidateSession[];

/** What messaging is built on. */
export interface MessagingDeps {
  instanceId: string;
  sessions: Sessions;
  inbox: InboxStore;
  /** The person's inbox (DR-0056). */
  notifications: NotificationsStore;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
  /** Route (a)'s setup: the harness whose sockets it reaches. */
  direct: DirectSetup;
  /** Told of every message and notification (the search index). */
  observer?: MessagingObserver;
  /** Candidates on other instances (a port onto the mesh, DR-0048). */
  elsewhere?: CandidatesElsewhere;
  /** What transcripts say the model saw (the search index, DR-0054). */
  evidence?: EvidenceSource;
}

/**
 * Carrying a message from one session (or a person) to one session (contract
 * §7): hand it over now when the recipient listens, otherwise hold it in the
 * inbox and say why. A held message reaches its recipient exactly once, oldest
 * first, in the snapshot of its next `inbox` subscription — there is no resend
 * timer.
 */
export class Messaging {
  private counter: number;
  private readonly instanceId: string;
  private readonly sessions: Sessions;
  private readonly inbox: InboxStore;
  private readonly notifications: NotificationsStore;
  private readonly hub: TopicHub;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly observer: MessagingObserver | undefined;
  private readonly elsewhere: CandidatesElsewhere | undefined;
  /** `say_post` marks: volatile, cleared by `say_mark_read`. */
  private readonly unread = new Map<Sid, number>();
  /** Sids with an offer of held messages in progress (one at a time). */
  private readonly offering = new Set<Sid>();
  /** Sids that got new held messages while an offer was in progress. */
  private readonly offerAgain = new Set<Sid>();
  private readonly handOvers = new HandOvers();
  /** Route (b): the recipient's inbox subscription. */
  readonly lane: InboxLane;
  /** Route (a): straight into the recipient's harness. */
  readonly direct: DirectRoute;
  /** What became of each message (DR-0054). */
  readonly receipts: Receipts;
  /** A person's words typed into the recipient's terminal (DR-0055). */
  private readonly typed: TypedRoute;

  constructor(deps: MessagingDeps) {
    const { inbox, hub, clock, log, sessions } = deps;
    this.instanceId = deps.instanceId;
    this.sessions = sessions;
    this.inbox = inbox;
    this.notifications = deps.notifications;
    this.hub = hub;
    this.clock = clock;
    this.log = log;
    this.observer = deps.observer;
    this.elsewhere = deps.elsewhere;
    this.direct = new DirectRoute(deps.direct, inbox, this.directHooks(), () => clock.now(), log);
    this.receipts = new Receipts({
      ...{ instanceId: deps.instanceId, inbox, hub, log, evidence: deps.evidence },
      live: (sid) => sessions.lookup(sid)?.kind === "live",
      label: (sid) => sessions.label(sid),
      reoffer: (sid) => this.resume(sid),
      notify: (sid, text) => this.notify(sid, text),
    });
    const { enabled, harness, home, env } = deps.direct;
    this.typed = new TypedRoute({ enabled: enabled && harness === "claude", home, env }, log);
    // Mids resume above every mid this instance ever issued, so a `reply_to`
    // never points at a reused mid.
    this.counter = inbox.midFloor();
    hub.provideSnapshot(
      "inbox",
      (conn) => this.snapshot(conn),
      (conn, ok, data) => this.written(conn, ok, data as InboxMessage[]),
    );
    this.lane = new InboxLane(hub, {
      // A receiver that was refused messages reads again: offer what it missed.
      reading: (sid, conn) => this.offerHeld(sid, conn),
      // What a hand-over subscriber claimed and did not confirm is held again.
      ended: (sid, conn) => this.afterRelease(sid, this.handOvers.releaseAll(conn)),
    });
    // Messages a harness may have taken as the last run ended: settled by
    // the transcript, then offered like any held message if they did not
    // arrive (DR-0050); what is held after them waited for this (DR-0053).
    void this.direct.settleInDoubt().then((settled) => {
      for (const sid of settled) this.resume(sid);
    });
    // A session that is live again is offered what is held for it through its
    // harness (contract §7.7: an event, never a timer).
    const live = new Set<Sid>();
    sessions.onLifecycle((s) => {
      if (!("connections" in s)) live.delete(s.sid);
      else if (!live.has(s.sid)) {
        live.add(s.sid);
        void this.direct.offerHeld(s.sid);
      }
    });
  }

  /**
   * A session's inbox snapshot is what is held for it, claimed by the
   * subscriber: a plain one's claims are recorded delivered once the frames
   * reached its socket (subscribing is receiving, DR-0050), a hand-over one's
   * once it confirms (DR-0024). It stops at the first message on its way
   * elsewhere (DR-0053).
   */
  private snapshot(conn: Connection): InboxMessage[] {
    const identity = conn.identity;
    if (identity?.role !== "session") return [];
    const sid = identity.sid;
    const held = this.inbox.peekHeld(sid, this.clock.now(), INBOX_RETENTION_MS);
    if (held !== undefined) return this.handOvers.claim(conn, sid, held);
    // Another process holds the write lock: the snapshot is empty and what
    // is held follows as soon as it can be read.
    this.offerHeld(sid, conn);
    return [];
  }

  /**
   * Claimed messages reached a plain subscriber's socket (`ok`): record them
   * delivered. Until that is committed they stay claimed, so no other route
   * offers them; a commit that fails is tried again, and a crash before it
   * leaves them held — offered again with the same mids, never lost. When
   * the connection ended first, its claims are released with it.
   */
  private written(conn: Connection, ok: boolean, messages: readonly InboxMessage[]): void {
    const identity = conn.identity;
    if (!ok || identity?.role !== "session" || this.handOvers.mode(conn) !== undefined) return;
    const counters = messages.map((m) => parseMid(m.mid).counter);
    const claims = this.handOvers.beginSettle(conn, counters, true);
    if (claims === undefined || claims.length === 0) return;
    const record = (): void => {
      this.inbox
        .settleWritten(
          identity.sid,
          claims.map((c) => c.counter),
          this.clock.now(),
        )
        .then(
          () => {
            this.handOvers.endSettle(conn, claims, true);
            this.resume(identity.sid);
          },
          (error: unknown) => {
            this.log.warn({ err: error, sid: identity.sid }, "delivery not recorded yet: retrying");
            setTimeout(record, 1000).unref();
          },
        );
    };
    record();
  }

  /** Make `conn`'s next `inbox` subscription a hand-over one (DR-0024), or
   * a plain one (undefined). */
  armHandOver(conn: Connection, mode: HandOverMode | undefined): void {
    this.handOvers.arm(conn, mode);
  }

  /**
   * A hand-over subscriber passed these claimed messages on: record them
   * delivered, all or none. Returns the mids recorded — empty when one of
   * them is not its claim any more (then none is, and all are held again).
   */
  async confirmHandOver(conn: Connection, mids: readonly string[]): Promise<string[]> {
    const identity = conn.identity;
    if (identity?.role !== "session") return [];
    return this.settleHandOver(conn, identity.sid, mids);
  }

  /**
   * A hand-over in-process (the http hook route, DR-0058): what is held for
   * `sid`, claimed as a `take` subscription's snapshot claims it — the same
   * claims, so a hook over the socket and this one never both get a
   * message. `confirm` records the passed-on ones delivered (all or none;
   * it resolves once committed), `release` lets the rest go, as the take
   * subscription's end does; call it when done, whatever happened.
   */
  handOverHere(sid: Sid): {
    claimed: InboxMessage[];
    confirm(mids: readonly string[]): Promise<string[]>;
    release(): void;
  } {
    const claimant = {};
    this.handOvers.arm(claimant, "take");
    // Another process holding the write lock: nothing now, it stays held.
    const held = this.inbox.peekHeld(sid, this.clock.now(), INBOX_RETENTION_MS);
    return {
      claimed: held === undefined ? [] : this.handOvers.claim(claimant, sid, held),
      confirm: (mids) => this.settleHandOver(claimant, sid, mids),
      release: () => this.afterRelease(sid, this.handOvers.releaseAll(claimant)),
    };
  }

  private async settleHandOver(
    claimant: Claimant,
    sid: Sid,
    mids: readonly string[],
  ): Promise<string[]> {
    const counters: number[] = [];
    for (const mid of mids) {
      const parsed = isMid(mid) ? parseMid(mid) : undefined;
      if (parsed?.instance !== this.instanceId) return [];
      counters.push(parsed.counter);
    }
    const claims = this.handOvers.beginSettle(claimant, counters);
    if (claims === undefined) return [];
    try {
      const route = this.handOvers.mode(claimant) === "take" ? "hook" : "waiter";
      await this.inbox.settleDelivered(sid, counters, this.clock.now(), route);
    } catch (error) {
      this.log.warn({ err: error, sid }, "hand-over not recorded: held again");
      this.afterRelease(sid, this.handOvers.endSettle(claimant, claims, false));
      return [];
    }
    this.handOvers.endSettle(claimant, claims, true);
    this.resume(sid);
    return [...mids];
  }

  /** What receives `sid`'s inbox now: a waiter, a plain subscriber, or none. */
  receiverOf(sid: Sid): "wait" | "plain" | undefined {
    const holder = this.lane.holder(sid);
    if (holder === undefined) return undefined;
    return this.handOvers.mode(holder) === "wait" ? "wait" : "plain";
  }

  /** The session declared it is stopping: its waiter stops receiving, so
   * nothing is handed to a hook whose session is going away. */
  endWaiting(sid: Sid): void {
    const holder = this.lane.holder(sid);
    if (holder !== undefined && this.handOvers.mode(holder) === "wait") this.lane.supersede(holder);
  }

  async send(from: Sender, args: MessageSendArgs): Promise<MessageSendResult> {
    const target = this.sessions.lookup(args.to);
    if (target === undefined) throw contractError("session_not_found", `no session ${args.to}`);
    const now = this.clock.now();
    const counter = ++this.counter;
    const message: InboxMessage = {
      mid: `${this.instanceId}/${counter}`,
      from,
      from_label: this.sessions.label(from),
      text: args.text,
      sent_at: now,
    };
    if (args.reply_to !== undefined) message.reply_to = args.reply_to;
    if (from === "user") this.sessions.markUserInput(args.to);
    const result =
      (from === "user" && target.kind === "live"
        ? await this.typeIn(args.to, counter, message)
        : undefined) ?? (await this.carry(args.to, target, counter, message));
    this.observer?.message(args.to, message);
    return result;
  }

  /**
   * A person's message typed into the session's pane as its person's prompt
   * (DR-0055), when nothing older waits for it; undefined when the route is
   * not open (nothing was typed). Typed is delivered, confirmed or not: the
   * keys were sent, so no other route carries it too.
   */
  private async typeIn(
    to: Sid,
    counter: number,
    message: InboxMessage,
  ): Promise<MessageSendResult | undefined> {
    if (this.behind(to)) return undefined;
    const outcome = await this.typed.deliver(to, message.text);
    if (outcome === undefined) return undefined;
    this.log.info({ sid: to, mid: message.mid, typed: outcome.typed }, "typed into the session");
    const recorded = await this.inbox.recordDelivered(to, counter, message, "typed").then(
      () => true,
      (error: unknown) => {
        this.log.warn({ err: error, sid: to }, "typed message not recorded");
        return false;
      },
    );
    if (recorded && outcome.typed === "confirmed")
      void this.receipts.typedSeen(to, counter, outcome.at);
    // What arrived while it was typed waited behind it.
    this.resume(to);
    return { delivered: true, typed: outcome.typed };
  }

  /** Delivered now, or held and why (contract §7.3). */
  private async carry(
    to: Sid,
    target: NonNullable<ReturnType<Sessions["lookup"]>>,
    counter: number,
    message: InboxMessage,
  ): Promise<MessageSendResult> {
    const direct = await this.direct.send(to, counter, message);
    if (direct !== undefined) return direct;

    if (target.kind === "live") {
      const holder = this.lane.holder(to);
      if (holder !== undefined && this.handOvers.mode(holder) === "wait")
        return this.sendByOffer(to, counter, message, "preparing");
      // Behind older ones: it follows them (a receiver refused messages gets
      // them all once it reads again).
      if (holder !== undefined && this.behind(to, holder))
        return this.lane.refusing(holder)
          ? this.hold(to, counter, message, "throttled")
          : this.sendByOffer(to, counter, message, "throttled");
      let outcome = await this.deliverLive(to, counter, message);
      // Its receiver went while it waited; a newer one may have taken over.
      if (outcome === "none") outcome = await this.deliverLive(to, counter, message);
      if (outcome === "accepted") return { delivered: true };
      if (outcome === "kept") return { delivered: false, reason: "preparing" };
      return this.hold(to, counter, message, outcome === "stalled" ? "throttled" : "preparing");
    }
    const state = lostStateOf(target.row);
    const result = await this.hold(to, counter, message, state);
    if (result.reason === state) {
      const local = this.sessions.candidates(target.row);
      result.candidates = this.elsewhere?.(target.row, local) ?? local;
    }
    return result;
  }

  /**
   * Route (b) to a plain subscriber (DR-0050): the frame goes into its egress
   * queue and the message is stored — delivered if the frame reached the
   * socket by the commit, else held and claimed by that connection until it
   * does, so a crash meanwhile offers it again instead of losing it. The
   * reply waits for the commit, not for the socket: a receiver that stops
   * reading paces its senders through the queue's bounds, never hangs them.
   * `kept`: the connection ended before the frame left; the message is held
   * and offered to the next receiver.
   */
  private async deliverLive(
    to: Sid,
    counter: number,
    message: InboxMessage,
  ): Promise<InboxDelivery | "kept"> {
    const conn = this.lane.holder(to);
    if (conn === undefined) return "none";
    let written: boolean | undefined;
    let settle: ((ok: boolean) => void) | undefined;
    const outcome = await this.lane.deliver(to, message, (ok) => {
      written = ok;
      settle?.(ok);
    });
    if (outcome !== "accepted") return outcome;
    if (written === undefined) this.handOvers.claim(conn, to, [{ counter, message }]);
    let state: "held" | "delivered";
    try {
      state = await this.inbox.recordHanded(to, counter, message, () => written === true);
    } catch (error) {
      // Handed over: the reply says so whatever happens to the record — a
      // sender told otherwise would send it twice.
      this.log.warn({ err: error, sid: to }, "delivered message not recorded");
      this.handOvers.forget(to, counter);
      return "accepted";
    }
    if (state === "delivered") {
      this.handOvers.forget(to, counter);
      return "accepted";
    }
    if (written === false) {
      this.afterRelease(to, [{ counter }]);
      return "kept";
    }
    settle = (ok) => this.written(conn, ok, [message]);
    if (written === true) settle(true);
    return "accepted";
  }

  private directHooks() {
    return {
      hold: (sid: Sid, counter: number, m: InboxMessage) => this.hold(sid, counter, m, "throttled"),
      recordDelivered: (
        sid: Sid,
        counter: number,
        m: InboxMessage,
        route: DirectRouteName,
        parked?: boolean,
      ) =>
        this.inbox.recordDelivered(sid, counter, m, route, parked).catch((error: unknown) => {
          this.log.warn({ err: error, sid }, "delivered message not recorded");
        }),
      offerElsewhere: (sid: Sid) => {
        const conn = this.lane.holder(sid);
        if (conn !== undefined && this.waiting(sid)) this.offerHeld(sid, conn);
      },
      claimedElsewhere: (sid: Sid) => this.handOvers.claimed(sid),
      behind: (sid: Sid) => this.behind(sid),
      delivered: (_sid: Sid, counter: number) => this.handOvers.settleFate(counter, true),
    };
  }

  /**
   * Whether a new message for `sid` must wait behind an older one (DR-0053):
   * route (a) is handing one over, or one is held — stored, claimed or in
   * flight — that is not on its way to `conn` already (the receiver the new
   * one would go to, behind it in the same queue). From memory: the hot path
   * of a send pays no read.
   */
  private behind(sid: Sid, conn?: Connection): boolean {
    if (this.direct.isBusy(sid) || this.typed.isBusy(sid)) return true;
    if (this.handOvers.claimedByOther(sid, conn)) return true;
    const queued =
      conn === undefined ? undefined : (c: number) => this.handOvers.owner(sid, c) === conn;
    return this.inbox.hasHeld(sid, this.clock.now(), INBOX_RETENTION_MS, queued);
  }

  /** Whether something is held for `sid` that nobody has claimed: what an
   * offer would take. */
  private waiting(sid: Sid): boolean {
    return this.inbox.hasHeld(sid, this.clock.now(), INBOX_RETENTION_MS, (c) =>
      this.handOvers.isClaimed(sid, c),
    );
  }

  /**
   * Claims on `sid` ended (confirmed, written, settled from a transcript):
   * what is still held goes on, oldest first, by whichever route there is —
   * each offer stops at the first message another holds, so between them
   * nothing is passed over.
   */
  private resume(sid: Sid): void {
    if (!this.waiting(sid)) return;
    const holder = this.lane.holder(sid);
    if (holder !== undefined && !holder.isClosed) this.offerHeld(sid, holder);
    void this.direct.offerHeld(sid);
  }

  /**
   * The message goes to the recipient's receiver after what is held before
   * it: held first (a waiter killed before passing it on must not lose it),
   * offered with the rest oldest first, and answered `delivered` only once
   * recorded so (a waiter confirmed it, it reached a plain subscriber's
   * socket, or route (a) handed it over) — else it stays held (`reason`) for
   * the next receiver, hook or offer.
   */
  private async sendByOffer(
    sid: Sid,
    counter: number,
    message: InboxMessage,
    reason: "preparing" | "throttled",
  ): Promise<MessageSendResult> {
    const fate = this.handOvers.fate(counter);
    let held: MessageSendResult;
    try {
      held = await this.hold(sid, counter, message, reason);
    } catch (error) {
      this.handOvers.settleFate(counter, false);
      throw error;
    }
    const holder = this.lane.holder(sid);
    if (holder === undefined) this.handOvers.settleFate(counter, false);
    else this.offerHeld(sid, holder);
    return (await fate) ? { delivered: true } : held;
  }

  /**
   * Store a message for later. When it cannot be stored (the database is
   * locked for too long, the disk is full) the reply is `internal_error`
   * saying it was not sent: nothing was kept or delivered, so sending it
   * again duplicates nothing.
   */
  private async hold(
    sid: Sid,
    counter: number,
    message: InboxMessage,
    reason: "preparing" | "throttled" | "paused" | "disappeared",
  ): Promise<MessageSendResult> {
    let stored: { dropped?: string };
    try {
      stored = await this.inbox.hold(sid, counter, message, INBOX_MAX_PER_SID, INBOX_RETENTION_MS);
    } catch (error) {
      const why =
        error instanceof ContractError ? error.message : "the message could not be stored";
      throw contractError("internal_error", `not sent, retry: ${why}`, { cause: error });
    }
    if (stored.dropped === undefined) return { delivered: false, reason };
    this.log.info({ sid, mid: stored.dropped }, "inbox full: oldest message dropped");
    const dropped = parseMid(stored.dropped).counter;
    this.handOvers.forget(sid, dropped);
    this.handOvers.settleFate(dropped, false);
    return { delivered: false, reason: "inbox_full" };
  }

  /**
   * Offer what is held for `sid` to its receiver `conn` as soon as the store
   * allows, if `conn` is still the one receiving then: claimed, and recorded
   * delivered once in a plain subscriber's socket or confirmed by a waiter.
   * Retried while it is (another process may hold the lock for long). One
   * offer per sid at a time; what arrives meanwhile is offered right after.
   */
  private offerHeld(sid: Sid, conn: Connection): void {
    if (this.offering.has(sid)) {
      this.offerAgain.add(sid);
      return;
    }
    this.offering.add(sid);
    const current = () => this.lane.holder(sid) === conn && !conn.isClosed;
    const now = () => this.clock.now();
    const offer = this.inbox
      .peekHeldLater(sid, now, INBOX_RETENTION_MS)
      .then((held) => (current() ? this.handOvers.claim(conn, sid, held) : []));
    offer.then(
      (messages) => {
        this.offering.delete(sid);
        for (const m of messages) this.lane.offer(conn, m, (ok) => this.written(conn, ok, [m]));
        const holder = this.lane.holder(sid);
        if (holder !== conn || this.offerAgain.has(sid)) {
          this.offerAgain.delete(sid);
          if (holder !== undefined) this.offerHeld(sid, holder);
        }
      },
      (error: unknown) => {
        this.offering.delete(sid);
        this.log.warn({ err: error, sid }, "held messages not offered yet");
        if (current()) setTimeout(() => this.offerHeld(sid, conn), 1000).unref();
      },
    );
  }

  /** Claims released without being confirmed: the messages are held again,
   * offered to the receiver there is (and through route (a), which may have
   * waited for them), or their senders told they are held. */
  private afterRelease(sid: Sid, released: { counter: number }[]): void {
    if (released.length === 0) return;
    // After the current turn: a waiter superseding the one released claims
    // them in its own snapshot first.
    setImmediate(() => {
      void this.direct.offerHeld(sid);
      const holder = this.lane.holder(sid);
      if (holder !== undefined && !holder.isClosed) return this.offerHeld(sid, holder);
      for (const { counter } of released)
        if (!this.handOvers.isClaimed(sid, counter)) this.handOvers.settleFate(counter, false);
    });
  }

  /**
   * A line for the person: kept in their inbox (DR-0056), then pushed to
   * whoever watches. Resolves once it is on disk; a line that could not be
   * kept is still pushed (the contract's best effort) and resolves
   * `undefined`. Never rejects.
   */
  notify(
    about: Sid,
    text: string,
    now = this.clock.now(),
  ): Promise<StoredNotification | undefined> {
    const note = this.notification(about, text, now);
    return this.notifications.add(note).then(
      (kept) => {
        this.publish(note);
        return kept;
      },
      (error: unknown) => {
        this.log.warn({ err: error, sid: about }, "notification not kept");
        this.publish(note);
        return undefined;
      },
    );
  }

  /**
   * A session answers a person's message `replyTo`: kept with the link (and
   * the start of the message it answers, when this instance carried it to
   * that session), then pushed like any notification. Rejects
   * `internal_error` when it could not be kept: nothing was pushed, so
   * sending it again duplicates nothing.
   */
  async replyToPerson(from: Sid, replyTo: string, text: string): Promise<StoredNotification> {
    const note = { ...this.notification(from, text, this.clock.now()), reply_to: replyTo };
    const parsed = isMid(replyTo) ? parseMid(replyTo) : undefined;
    const quote =
      parsed?.instance === this.instanceId
        ? () =>
            this.inbox.messageTo(from, parsed.counter)?.text.slice(0, NOTIFICATION_QUOTE_MAX_CHARS)
        : undefined;
    let kept: StoredNotification;
    try {
      kept = await this.notifications.add(note, quote);
    } catch (error) {
      const why = error instanceof ContractError ? error.message : "it could not be stored";
      throw contractError("internal_error", `not sent, retry: ${why}`, { cause: error });
    }
    this.publish(note);
    return kept;
  }

  private notification(about: Sid, text: string, now: number): Notification {
    return { sid: about, sid_label: this.sessions.label(about), text, sent_at: now };
  }

  /** The generation-3 `notify` event: its shape, nothing added. */
  private publish(note: Notification & { reply_to?: string }): void {
    const { reply_to: _link, ...event } = note;
    this.hub.publish("notify", event);
    this.observer?.notification(event);
  }

  /** A session spoke: raise its unread mark and tell watchers. */
  say(sid: Sid, text: string): number {
    const now = this.clock.now();
    this.unread.set(sid, now);
    // One instant: the reply's posted_at is the notification's sent_at.
    void this.notify(sid, text, now);
    return now;
  }

  clearUnread(sid?: Sid): void {
    if (sid === undefined) this.unread.clear();
    else this.unread.delete(sid);
  }
}
