import type { Role } from "../contract/identifiers.js";
import { Egress } from "./egress.js";
import type { Channel } from "./transport/channel.js";

/** Who a connection speaks for, settled once by `hello`. */
export interface Identity {
  role: Role;
  sid?: string;
}

/** Bytes of replies waiting for a client that does not read, past which the
 * instance stops reading its requests until it catches up: a client that never
 * reads cannot grow the instance's memory without bound. */
const REPLY_BACKLOG_LIMIT = 4 * 1024 * 1024;

let nextId = 1;

/**
 * One client connection, whatever its transport: its identity, its topic
 * subscriptions and its egress. Requests may complete out of order; replies
 * carry `request_id` and are written as each completes.
 */
export class Connection {
  readonly id = nextId++;
  identity?: Identity;
  /** Topic names this connection holds. */
  readonly topics = new Set<string>();
  /** The last value frame sent per value topic, for suppression: a value equal
   * to the last one sent is not sent again (the snapshot counts as sent). */
  readonly lastValues = new Map<string, string>();
  readonly egress: Egress;
  closed = false;
  private readingPaused = false;
  private readonly closeListeners: (() => void)[] = [];

  constructor(readonly channel: Channel) {
    this.egress = new Egress(channel);
    channel.onDrain(() => {
      if (this.readingPaused && channel.backlog() < REPLY_BACKLOG_LIMIT / 2) {
        this.readingPaused = false;
        channel.resumeReading();
      }
    });
  }

  /** Write a reply (or a connection event). Replies are never refused: each
   * answers a request this connection sent, so their number is bounded by what
   * it asks; reading pauses instead when they pile up. */
  send(line: string): void {
    if (this.closed) return;
    this.channel.write(line);
    if (!this.readingPaused && this.channel.backlog() > REPLY_BACKLOG_LIMIT) {
      this.readingPaused = true;
      this.channel.pauseReading();
    }
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** Called by the transport when the peer went away. */
  handleClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.egress.dispose();
    for (const listener of this.closeListeners) listener();
  }

  close(): void {
    this.channel.close();
  }
}
