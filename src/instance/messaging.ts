import type { Logger } from "pino";
import { INBOX_MAX_PER_SID, INBOX_RETENTION_MS } from "../contract/constants.js";
import { ContractError, contractError } from "../contract/errors.js";
import type { Sender, Sid } from "../contract/identifiers.js";
import type {
  InboxMessage,
  MessageSendArgs,
  MessageSendResult,
  Notification,
} from "../contract/messaging.js";
import { lostStateOf } from "../contract/peers.js";
import type { InboxStore } from "../store/inbox.js";
import type { Clock } from "./clock.js";
import type { Sessions } from "./sessions.js";
import type { TopicHub } from "./topic-hub.js";
import type { Connection } from "./wire/connection.js";

/**
 * Carrying a message from one session (or a person) to one session (contract
 * §7): hand it over now when the recipient listens, otherwise hold it in the
 * inbox and say why. A held message reaches its recipient exactly once, oldest
 * first, in the snapshot of its next `inbox` subscription — there is no resend
 * timer.
 */
export class Messaging {
  private counter: number;
  /** `say_post` marks: volatile, cleared by `say_mark_read`. */
  private readonly unread = new Map<Sid, number>();
  /** Sids with an offer of held messages in progress (one at a time). */
  private readonly offering = new Set<Sid>();

  constructor(
    private readonly instanceId: string,
    private readonly sessions: Sessions,
    private readonly inbox: InboxStore,
    private readonly hub: TopicHub,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    // Mids resume above every mid this instance ever issued, so a `reply_to`
    // never points at a reused mid.
    this.counter = inbox.midFloor();
    // A session's inbox snapshot is what is held for it, taken as handed over.
    hub.provideSnapshot("inbox", (conn) => {
      const identity = conn.identity;
      if (identity?.role !== "session") return [];
      const taken = this.inbox.takeHeld(identity.sid, this.clock.now(), INBOX_RETENTION_MS);
      // Another process holds the write lock: the snapshot is empty and what
      // is held follows as soon as it can be taken.
      if (taken === undefined) this.offerHeld(identity.sid, conn);
      return taken ?? [];
    });
    // A receiver that was refused messages reads again: offer what it missed.
    hub.onInboxReading((sid, conn) => this.offerHeld(sid, conn));
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

    if (target.kind === "live") {
      let outcome = await this.hub.deliverInbox(args.to, message);
      // Its receiver went while it waited; a newer one may have taken over.
      if (outcome === "none") outcome = await this.hub.deliverInbox(args.to, message);
      if (outcome === "accepted") {
        // Handed over: the reply says so whatever happens to the record —
        // a sender told otherwise would send it twice.
        await this.inbox.recordDelivered(args.to, counter, message).catch((error: unknown) => {
          this.log.warn({ err: error, sid: args.to }, "delivered message not recorded");
        });
        return { delivered: true };
      }
      return this.hold(
        args.to,
        counter,
        message,
        outcome === "stalled" ? "throttled" : "preparing",
      );
    }
    const state = lostStateOf(target.row);
    const result = await this.hold(args.to, counter, message, state);
    if (result.reason === state) result.candidates = this.sessions.candidates(target.row);
    return result;
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
    return { delivered: false, reason: "inbox_full" };
  }

  /**
   * Hand what is held for `sid` to its inbox subscriber `conn` as soon as the
   * store allows, if `conn` is still the one receiving then. Retried while it
   * is (another process may hold the lock for long).
   */
  private offerHeld(sid: Sid, conn: Connection): void {
    if (this.offering.has(sid)) return;
    this.offering.add(sid);
    const current = () => this.hub.inboxHolder(sid) === conn && !conn.isClosed;
    this.inbox
      .takeHeldLater(sid, () => this.clock.now(), INBOX_RETENTION_MS, current)
      .then(
        (messages) => {
          this.offering.delete(sid);
          for (const m of messages) this.hub.offerInbox(conn, m);
        },
        (error: unknown) => {
          this.offering.delete(sid);
          this.log.warn({ err: error, sid }, "held messages not offered yet");
          if (current()) setTimeout(() => this.offerHeld(sid, conn), 1000).unref();
        },
      );
  }

  /** A best-effort line for whoever watches; nothing is kept. */
  notify(about: Sid, text: string, now = this.clock.now()): void {
    const note: Notification = {
      sid: about,
      sid_label: this.sessions.label(about),
      text,
      sent_at: now,
    };
    this.hub.publish("notify", note);
  }

  /** A session spoke: raise its unread mark and tell watchers. */
  say(sid: Sid, text: string): number {
    const now = this.clock.now();
    this.unread.set(sid, now);
    // One instant: the reply's posted_at is the notification's sent_at.
    this.notify(sid, text, now);
    return now;
  }

  clearUnread(sid?: Sid): void {
    if (sid === undefined) this.unread.clear();
    else this.unread.delete(sid);
  }
}
