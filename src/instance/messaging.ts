import type { Logger } from "pino";
import { INBOX_MAX_PER_SID, INBOX_RETENTION_MS } from "../contract/constants.js";
import { contractError } from "../contract/errors.js";
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
      return identity?.role === "session" ? this.takeHeld(identity.sid) : [];
    });
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
      const pushed = this.hub.pushInbox(args.to, message);
      if (pushed === "accepted") {
        await this.inbox.recordDelivered(args.to, counter, message);
        return { delivered: true };
      }
      return this.hold(args.to, counter, message, pushed === "refused" ? "throttled" : "preparing");
    }
    const state = lostStateOf(target.row);
    const result = await this.hold(args.to, counter, message, state);
    if (result.reason === state) result.candidates = this.sessions.candidates(target.row);
    return result;
  }

  private async hold(
    sid: Sid,
    counter: number,
    message: InboxMessage,
    reason: "preparing" | "throttled" | "paused" | "disappeared",
  ): Promise<MessageSendResult> {
    const { committed, dropped } = this.inbox.hold(
      sid,
      counter,
      message,
      INBOX_MAX_PER_SID,
      (mid) => this.log.info({ sid, mid }, "inbox full: oldest message dropped"),
    );
    await committed;
    return { delivered: false, reason: dropped ? "inbox_full" : reason };
  }

  /** Everything held for `sid`, leaving the inbox as it is handed over. */
  private takeHeld(sid: Sid): InboxMessage[] {
    return this.inbox.takeHeld(sid, this.clock.now(), INBOX_RETENTION_MS);
  }

  /** A best-effort line for whoever watches; nothing is kept. */
  notify(about: Sid, text: string): void {
    const note: Notification = {
      sid: about,
      sid_label: this.sessions.label(about),
      text,
      sent_at: this.clock.now(),
    };
    this.hub.publish("notify", note);
  }

  /** A session spoke: raise its unread mark and tell watchers. */
  say(sid: Sid, text: string): number {
    const now = this.clock.now();
    this.unread.set(sid, now);
    this.notify(sid, text);
    return now;
  }

  clearUnread(sid?: Sid): void {
    if (sid === undefined) this.unread.clear();
    else this.unread.delete(sid);
  }
}
