import { encodeEvent } from "../../contract/frames.js";
import type { InboxMessage } from "../../contract/messaging.js";
import type { SubscriptionRules, TopicHub } from "../topic-hub.js";
import type { Connection } from "../wire/connection.js";
import { BACKPRESSURE } from "../wire/outbound.js";

/** How an inbox hand-over ended (see `deliver`). */
export type InboxDelivery = "accepted" | "stalled" | "none";

interface Waiting {
  line: string;
  resolve: (outcome: InboxDelivery) => void;
  written?: (ok: boolean) => void;
}

/** What the lane tells messaging. */
export interface InboxLaneListeners {
  /** A receiver that was refused messages reads again (what it was refused
   * is held and may now be offered). */
  reading(sid: string, conn: Connection): void;
  /** A session connection's `inbox` subscription ended, however it ended
   * (unsubscribed, superseded, closed). */
  ended(sid: string, conn: Connection): void;
}

/**
 * The `inbox` topic's own rules over the hub's subscriptions (contract §7
 * route b): one receiving connection per session, a newer one superseding
 * the older; messages paced to a receiver that keeps reading, refused
 * (`stalled`) to one that stopped.
 */
export class InboxLane implements SubscriptionRules {
  /** The connection receiving each session's inbox: one per sid. */
  private readonly holders = new Map<string, Connection>();
  /** Inbox messages waiting for room at a receiver that is reading. */
  private readonly lanes = new Map<Connection, Waiting[]>();
  private readonly stallTimers = new Map<Connection, NodeJS.Timeout>();
  /** Receivers refused an inbox message, until they read again. */
  private readonly throttled = new WeakSet<Connection>();

  constructor(
    private readonly hub: Pick<
      TopicHub,
      "deltaLine" | "countRefused" | "unsubscribe" | "governSubscriptions"
    >,
    private readonly listeners: InboxLaneListeners,
  ) {
    hub.governSubscriptions("inbox", this);
  }

  /** A session's `inbox` subscription makes the connection its receiver
   * unless `receiver` is false (a one-off take). */
  subscribed(conn: Connection, receiver: boolean): void {
    const identity = conn.identity;
    if (identity?.role === "session" && receiver) this.take(conn, identity.sid);
  }

  unsubscribed(conn: Connection): void {
    const identity = conn.identity;
    if (identity?.role !== "session") return;
    if (this.holders.get(identity.sid) === conn) this.holders.delete(identity.sid);
    // Messages waiting for this receiver find their way again.
    this.closeLane(conn, "none");
    this.listeners.ended(identity.sid, conn);
  }

  /** End a connection's inbox subscription because another takes over: it
   * is told, and gets nothing further. */
  supersede(conn: Connection): void {
    this.hub.unsubscribe(conn, "inbox");
    conn.send(encodeEvent({ ev: "subscribe_superseded" }));
  }

  /** A newer connection of the same session takes the inbox over; the older
   * one is told and gets nothing further from it. */
  private take(conn: Connection, sid: string): void {
    const previous = this.holders.get(sid);
    if (previous !== undefined && previous !== conn) this.supersede(previous);
    this.holders.set(sid, conn);
    conn.outbound.onProgress(() => this.progress(conn));
  }

  /** Whether a connection of `sid` is listening on its inbox. */
  has(sid: string): boolean {
    return this.holders.has(sid);
  }

  /** Whether `conn` was refused messages and has not read since (what it
   * is sent meanwhile is held until it does). */
  refusing(conn: Connection): boolean {
    return this.throttled.has(conn);
  }

  /** The connection that receives `sid`'s inbox now, if any. */
  holder(sid: string): Connection | undefined {
    return this.holders.get(sid);
  }

  /**
   * Hand a message to the recipient's inbox subscription: `accepted` (in the
   * receiver's egress queue, exactly once), `stalled` (the receiver has taken
   * nothing for a while and too much waits: hold it), or `none` (nobody
   * listens). A receiver that is making progress paces the sender instead:
   * the message waits its turn, in order, and settles `accepted` once there
   * is room — a burst is never refused to a reader that keeps reading. An
   * accepted frame's `written` hears whether it reached the socket (DR-0050).
   */
  deliver(
    sid: string,
    message: InboxMessage,
    written?: (ok: boolean) => void,
  ): InboxDelivery | Promise<InboxDelivery> {
    const conn = this.holders.get(sid);
    if (conn === undefined || conn.isClosed) return "none";
    // Message text and labels are bounded so that one message always fits a
    // frame; one that still does not (a label stored by an older build) is
    // held, as for a receiver that is not keeping up.
    const line = this.hub.deltaLine("inbox", JSON.stringify([message]));
    if (line === undefined) {
      this.hub.countRefused("inbox", conn);
      return "stalled";
    }
    let lane = this.lanes.get(conn);
    if (lane === undefined) {
      if (conn.outbound.ordered(line, false, written)) return "accepted";
      if (conn.outbound.notReading()) {
        this.hub.countRefused("inbox", conn);
        this.throttled.add(conn);
        return "stalled";
      }
      lane = this.openLane(conn);
    }
    return new Promise((resolve) => lane.push({ line, resolve, written }));
  }

  /** Offer a held message claimed for `conn` (never refused: it was claimed
   * for this receiver, so it must reach it); `done` hears whether it reached
   * the socket. */
  offer(conn: Connection, message: InboxMessage, done?: (ok: boolean) => void): void {
    const line = this.hub.deltaLine("inbox", JSON.stringify([message]));
    if (line === undefined || !conn.outbound.ordered(line, true, done)) done?.(false);
  }

  /** Messages waiting for room at one receiver, in order. */
  private openLane(conn: Connection): Waiting[] {
    const lane: Waiting[] = [];
    this.lanes.set(conn, lane);
    this.watchStall(conn);
    return lane;
  }

  /** The receiver took frames: move waiting messages into its queue while
   * there is room; a receiver refused before is reading again. */
  private progress(conn: Connection): void {
    const lane = this.lanes.get(conn);
    if (lane !== undefined) {
      let i = 0;
      for (; i < lane.length; i++) {
        const next = lane[i];
        if (next === undefined || !conn.outbound.ordered(next.line, false, next.written)) break;
        next.resolve("accepted");
      }
      lane.splice(0, i);
      if (lane.length === 0) this.closeLane(conn);
    }
    if (this.throttled.delete(conn) && conn.identity?.role === "session") {
      this.listeners.reading(conn.identity.sid, conn);
    }
  }

  /** Check for a receiver that stopped taking frames while messages wait for
   * it: those are refused (their senders hear `throttled`). */
  private watchStall(conn: Connection): void {
    const wait = Math.max(1, BACKPRESSURE.notReadingAfterMs - conn.outbound.stalledFor());
    this.stallTimers.set(
      conn,
      setTimeout(() => {
        if (!this.lanes.has(conn)) return;
        if (!conn.outbound.notReading()) return this.watchStall(conn);
        this.hub.countRefused("inbox", conn);
        this.throttled.add(conn);
        this.closeLane(conn, "stalled");
      }, wait),
    );
  }

  /** End a lane; what still waits in it settles with `outcome`. */
  private closeLane(conn: Connection, outcome?: InboxDelivery): void {
    const lane = this.lanes.get(conn);
    this.lanes.delete(conn);
    clearTimeout(this.stallTimers.get(conn));
    this.stallTimers.delete(conn);
    if (lane !== undefined && outcome !== undefined) for (const w of lane) w.resolve(outcome);
  }
}
