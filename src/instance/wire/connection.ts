import type { Identity } from "../../contract/envelope.js";
import { BACKPRESSURE, Outbound } from "./outbound.js";
import type { PeerEndpoint } from "./peer-endpoint.js";
import type { PersonPrincipal, Transport, TransportKind } from "./transport.js";

/**
 * Where a connection stands. `opening` until a `hello` settles who it speaks
 * for (`greeted`); `closing` once the instance asked the transport to end it;
 * `closed` when the stream ended, whoever ended it. Only the connection moves
 * between states; `greet` is the dispatcher's call.
 */
export type ConnectionState = "opening" | "greeted" | "closing" | "closed";

/** What the connection hands each inbound frame to (the dispatcher). */
export interface InboundHandler {
  frame(conn: Connection, line: string): void;
  oversized(conn: Connection): void;
}

let nextId = 1;
/** Requests running on every connection, and the connections that stopped
 * reading because there were too many (BACKPRESSURE.maxRequestsInFlightInAll). */
let everyInFlight = 0;
const pausedForAll = new Set<Connection>();

/**
 * One peer connection, whatever its transport: given a reader and a writer,
 * it owns its identity, its state and its one outbound queue. Requests may
 * complete out of order; replies carry `request_id` and are queued as each
 * completes.
 */
export class Connection {
  readonly id = nextId++;
  readonly kind: TransportKind;
  /** Where the peer's process can be looked up (a session's vouching). */
  readonly peer: PeerEndpoint | undefined;
  /** The person whose access token opened it, if one did. */
  readonly person: PersonPrincipal | undefined;
  /** Opened for the mesh handshake only (Transport.meshOnly). */
  readonly meshOnly: boolean;
  readonly outbound: Outbound;
  private state_: ConnectionState = "opening";
  private identity_: Identity | undefined;
  private readonly closeListeners: (() => void)[] = [];
  /** Why reading is paused: replies piling up, too many requests running. */
  private readonly pausedFor = new Set<"replies" | "requests" | "instance">();
  private inFlight = 0;
  /** The peer's input ended (a half-close): end once its requests are answered. */
  private peerEnded = false;
  private endCheck: NodeJS.Immediate | undefined;

  constructor(
    private readonly transport: Transport,
    inbound: InboundHandler,
  ) {
    this.kind = transport.kind;
    this.peer = transport.peer;
    this.person = transport.person;
    this.meshOnly = transport.meshOnly === true;
    this.outbound = new Outbound(transport.writer, {
      pause: () => this.pauseReading("replies"),
      resume: () => this.resumeReading("replies"),
    });
    transport.reader.listen({
      frame: (line) => inbound.frame(this, line),
      oversized: () => inbound.oversized(this),
      ended: () => {
        this.peerEnded = true;
        this.endWhenAnswered();
      },
      closed: () => this.closed(),
    });
  }

  get state(): ConnectionState {
    return this.state_;
  }

  /** Who the connection speaks for; undefined until greeted. */
  get identity(): Identity | undefined {
    return this.identity_;
  }

  get isClosed(): boolean {
    return this.state_ === "closed";
  }

  /** Settle the identity (a `hello` succeeded). Once only. */
  greet(identity: Identity): void {
    if (this.state_ !== "opening") return;
    this.identity_ = identity;
    this.state_ = "greeted";
  }

  /** Queue a reply or a connection event. */
  send(line: string): void {
    if (this.state_ !== "closed") this.outbound.reply(line);
  }

  /** A request of this peer started running; past the bound, stop reading
   * its next ones until half of those running were answered. */
  requestStarted(): void {
    if (++this.inFlight > BACKPRESSURE.maxRequestsInFlight) this.pauseReading("requests");
    if (++everyInFlight > BACKPRESSURE.maxRequestsInFlightInAll) {
      pausedForAll.add(this);
      this.pauseReading("instance");
    }
  }

  requestSettled(): void {
    if (--this.inFlight <= BACKPRESSURE.maxRequestsInFlight / 2) this.resumeReading("requests");
    if (--everyInFlight <= BACKPRESSURE.maxRequestsInFlightInAll / 2 && pausedForAll.size > 0) {
      const paused = [...pausedForAll];
      pausedForAll.clear();
      for (const c of paused) c.resumeReading("instance");
    }
    if (this.peerEnded) this.endWhenAnswered();
  }

  /** Every request read before the peer's end is answered (their replies are
   * queued before they settle): then the connection ends, as the peer asked.
   * Looked at again a turn later: a request held behind a `hello` still
   * settling starts only on a later microtask. */
  private endWhenAnswered(): void {
    if (this.inFlight > 0 || this.endCheck !== undefined) return;
    this.endCheck = setImmediate(() => {
      this.endCheck = undefined;
      if (this.inFlight === 0) this.close();
    });
  }

  private pauseReading(why: "replies" | "requests" | "instance"): void {
    if (this.pausedFor.size === 0) this.transport.reader.pause();
    this.pausedFor.add(why);
  }

  private resumeReading(why: "replies" | "requests" | "instance"): void {
    if (!this.pausedFor.delete(why) || this.pausedFor.size > 0) return;
    if (this.state_ !== "closed") this.transport.reader.resume();
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** End the connection from this side (a WebSocket with `code` and
   * `reason` when given). */
  close(code?: number, reason?: string): void {
    if (this.state_ === "closing" || this.state_ === "closed") return;
    this.state_ = "closing";
    this.outbound.flush();
    this.transport.writer.close(code, reason);
  }

  /** The transport reported the end of the stream. */
  private closed(): void {
    if (this.state_ === "closed") return;
    pausedForAll.delete(this);
    this.state_ = "closed";
    if (this.endCheck !== undefined) clearImmediate(this.endCheck);
    this.outbound.dispose();
    for (const listener of this.closeListeners) listener();
  }
}
