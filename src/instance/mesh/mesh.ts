import { hostname } from "node:os";
import {
  type MeshListing,
  normalizeEndpoint,
  ownEndpoint,
  type PeerRow,
} from "../../config/mesh.js";
import type { Identity } from "../../contract/envelope.js";
import { ContractError, contractError } from "../../contract/errors.js";
import { encodeFailure } from "../../contract/frames.js";
import { INSTANCE_ID_PATTERN } from "../../contract/identifiers.js";
import type { InstanceInfo } from "../../contract/peers.js";
import type { Logger } from "../../util/logger.js";
import type { Dispatcher } from "../dispatch.js";
import type { Connection, InboundHandler } from "../wire/connection.js";
import { Dialer } from "./dialer.js";
import { CLOSE, type Claim, parseObject } from "./frames.js";
import { Link } from "./link.js";
import { type Peer, PeerBook } from "./peer-book.js";
import type { LinkReply, MeshFrame, MeshPort, RelayedFrame } from "./port.js";
import { bindingRefusal, claimRefusal, Receiver } from "./receiver.js";
import { backoffDelay, MESH_TIMERS, type MeshTimers } from "./timers.js";

// The mesh's links (contract §8, §8.1; DR-0047): which connection is what
// (a handshake on either side — dialer.ts, receiver.ts — or a verified
// link), one kept link per peer (glare), reconnects, the peers list's
// changes, and the MeshPort the rest of the instance uses over the links.

// Kept importable from here, where the first version of this module had them.
export { ownEndpoint } from "../../config/mesh.js";
export { CLOSE } from "./frames.js";
export { MESH_TIMERS, type MeshTimers, meshTestHooks } from "./timers.js";

/** A request over a link without a reply this long fails (§8.1). */
export const REQUEST_TIMEOUT_MS = 10_000;
/** The longest a handshake may take, either side. */
const HANDSHAKE_MAX_MS = 10_000;
const ID = new RegExp(INSTANCE_ID_PATTERN);
/** Instance-rule frames the port itself speaks; `onFrame` cannot take them. */
const OWN_KINDS = new Set(["beat", "about", "proof"]);

export interface MeshOptions {
  id: string;
  log: Logger;
  /** The config's `mesh.endpoints` (fixed until a restart). */
  configRows: PeerRow[];
  /** `<state dir>/mesh.json` and its rows as read at start. */
  peersFile: string;
  fileRows: PeerRow[];
  timers?: Partial<MeshTimers>;
  /** Test hook: where to open the TCP connection for an endpoint (`host:port`). */
  dial?: Record<string, string>;
  /** What `instances()` returns changed (a link, a row, a host). */
  changed(): void;
}

interface Relay {
  topic: string;
  caller: Identity | undefined;
  onFrame: (peer: string, frame: RelayedFrame) => void;
}

type Inner = Pick<Dispatcher, "frame" | "oversized" | "admit">;

export class Mesh implements MeshPort {
  readonly id: string;
  private readonly log: Logger;
  private readonly timers: MeshTimers;
  private readonly handshakeMs: number;
  private endpoint_: string | undefined;
  /** Until HTTP is bound (`startOn`), and for good without an HTTP listener:
   * peers dial `<endpoint>ws`. */
  private inert_: string | undefined =
    "no HTTP listener (an instance started with --http off is in no mesh)";
  private readonly host = hostname() || "localhost";
  private readonly book: PeerBook;
  private readonly dialer: Dialer;
  private readonly receiver: Receiver;
  /** Verified links and handshakes in progress, by connection. */
  private readonly links = new Map<Connection, Link<Peer>>();
  /** Verified, the `hello` on its way through dispatch: its reply is the ack. */
  private readonly acking = new Map<Connection, { peer: Peer; id: string }>();
  private readonly relays = new Set<Relay>();
  private readonly frameHandlers = new Map<string, ((from: string, frame: MeshFrame) => void)[]>();
  private readonly linkListeners: ((peer: string, up: boolean) => void)[] = [];
  private inner: Inner | undefined;
  private counter = 0;
  private stopped = false;

  constructor(private readonly options: MeshOptions) {
    this.id = options.id;
    this.log = options.log;
    this.timers = { ...MESH_TIMERS, ...options.timers };
    this.handshakeMs = Math.min(HANDSHAKE_MAX_MS, this.timers.deadMs);
    this.book = new PeerBook(
      options.configRows,
      options.fileRows,
      options.peersFile,
      (row) => row.endpoint === this.endpoint_ || row.id === this.id,
    );
    const common = {
      log: this.log,
      handshakeMs: this.handshakeMs,
      endpoint: () => this.endpoint_,
      dialTo: (endpoint: string) => options.dial?.[endpoint],
    };
    this.dialer = new Dialer({
      ...common,
      id: this.id,
      inbound: { frame: (c, line) => this.frame(c, line), oversized: (c) => this.oversized(c) },
      acknowledged: (peer, conn, id, host) => {
        const refused =
          peer.configuredId !== undefined && peer.configuredId !== id
            ? `the peer answered as ${id}, not the listed ${peer.configuredId}`
            : bindingRefusal(this.peers, peer, id);
        if (refused !== undefined || peer.removed) return refused ?? "removed from the mesh list";
        if (host !== undefined) peer.host = host;
        conn.greet({ role: "instance" });
        this.linkUp(peer, conn, "out", id);
        return undefined;
      },
      failed: (peer, why) => {
        peer.lastError = why;
        this.retryLater(peer);
      },
    });
    this.receiver = new Receiver({
      ...common,
      claimRefusal: (claim) => this.claimRefusal(claim),
      verified: (conn, peer, id, line) => {
        this.acking.set(conn, { peer, id });
        this.inner?.frame(conn, line);
      },
      refuse: (conn, requestId, why) => this.refuse(conn, requestId, why),
    });
  }

  private get peers(): Map<string, Peer> {
    return this.book.peers;
  }

  // --- lifecycle ---

  /** The handler every accepted connection reads through: mesh handshakes
   * and link frames are taken here, everything else goes on to dispatch. */
  inbound(inner: Inner): InboundHandler {
    this.inner = inner;
    return {
      frame: (conn, line) => this.frame(conn, line),
      oversized: (conn) => this.oversized(conn),
    };
  }

  /** Begin once HTTP is bound (at `bound`, `host:port`), or stay inert
   * without it: the endpoint is `http.endpoint`, else the bound base URL. */
  startOn(bound: string, configured: string | undefined): void {
    // The config's list may name this instance by its id (§8.1): that row's
    // endpoint is what peers put in `aud`.
    const listed = this.options.configRows.find((r) => r.id === this.id)?.endpoint;
    const own = configured === undefined ? undefined : normalizeEndpoint(configured);
    if (own !== undefined && listed !== undefined && own !== listed)
      this.log.error(
        { http_endpoint: own, listed },
        "the config's mesh list names this instance at another endpoint than http.endpoint; peers dialing the listed one are refused",
      );
    this.start(own ?? listed ?? ownEndpoint(undefined, bound));
  }

  /** Begin with this instance's endpoint (dialing every peer), or stay inert
   * and say why. */
  start(endpoint: string | undefined, inertWhy?: string): void {
    if (endpoint === undefined) {
      this.inert_ = inertWhy ?? "no endpoint";
      return;
    }
    this.endpoint_ = endpoint;
    this.inert_ = undefined;
    this.book.load();
    if (this.peers.size > 0)
      this.log.info({ endpoint, peers: [...this.peers.keys()] }, "mesh starting");
    for (const peer of this.peers.values()) this.ensureDial(peer);
    this.options.changed();
  }

  stop(): void {
    this.stopped = true;
    for (const peer of this.peers.values()) {
      clearTimeout(peer.retry);
      for (const link of [...peer.links]) this.end(link, CLOSE.stopping, "the instance stops");
    }
    this.dialer.abandon("the instance stops");
    this.receiver.failAll("the instance stops");
  }

  /** How long a mesh socket may stay silent before greeting (the listener
   * cuts it then): the handshake's own limit. */
  get greetingMs(): number {
    return this.handshakeMs;
  }

  /** This instance's endpoint, once it has one. */
  get endpoint(): string | undefined {
    return this.endpoint_;
  }

  get configured(): boolean {
    return this.endpoint_ !== undefined && this.peers.size > 0;
  }

  // --- MeshPort ---

  instances(): InstanceInfo[] {
    const self: InstanceInfo = {
      id: this.id,
      ...(this.endpoint_ === undefined ? {} : { endpoint: this.endpoint_ }),
      host: this.host,
      reachable: true,
    };
    return [
      self,
      ...[...this.peers.values()].map((p) => ({
        ...(p.id === undefined ? {} : { id: p.id }),
        endpoint: p.endpoint,
        host: p.host ?? (new URL(p.endpoint).hostname || p.endpoint),
        reachable: p.link !== undefined,
      })),
    ];
  }

  linked(): string[] {
    return [...this.peers.values()].flatMap((p) => (p.link && p.id ? [p.id] : []));
  }

  anyUnreachable(): boolean {
    for (const p of this.peers.values()) if (p.link === undefined) return true;
    return false;
  }

  peerOf(conn: Connection): string | undefined {
    return this.links.get(conn)?.peer.id;
  }

  request(
    to: string,
    frame: Record<string, unknown>,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<LinkReply> {
    const link = this.linkTo(to);
    if (link === undefined)
      return Promise.reject(contractError("instance_unreachable", `no link to instance ${to}`));
    return this.requestOn(link, frame, timeoutMs);
  }

  relay(
    topic: string,
    caller: Identity | undefined,
    onFrame: (peer: string, frame: RelayedFrame) => void,
  ): () => void {
    const relay: Relay = { topic, caller, onFrame };
    this.relays.add(relay);
    for (const peer of this.peers.values()) if (peer.link) this.subscribeOn(relay, peer.link);
    return () => {
      if (!this.relays.delete(relay)) return;
      if ([...this.relays].some((r) => r.topic === topic)) return;
      for (const peer of this.peers.values())
        if (peer.link)
          this.requestOn(peer.link, { op: "topic_unsubscribe", topic }).catch(() => {});
    };
  }

  send(to: string, frame: MeshFrame): boolean {
    const link = this.linkTo(to);
    if (link === undefined) return false;
    link.conn.send(JSON.stringify(frame));
    return true;
  }

  onFrame(kind: string, handler: (from: string, frame: MeshFrame) => void): void {
    if (OWN_KINDS.has(kind)) throw new Error(`mesh frame kind ${kind} is the port's own`);
    const list = this.frameHandlers.get(kind) ?? [];
    list.push(handler);
    this.frameHandlers.set(kind, list);
  }

  onLink(listener: (peer: string, up: boolean) => void): void {
    this.linkListeners.push(listener);
  }

  // --- the hello handler's side (handlers/connect.ts) ---

  /** Whether an instance greeting on this WebSocket has passed its proof. */
  greetingVerified(conn: Connection): boolean {
    return this.acking.has(conn);
  }

  /** The greeting's reply (the ack) is queued: the link is up. */
  acked(conn: Connection): void {
    const verified = this.acking.get(conn);
    if (verified === undefined) return;
    this.acking.delete(conn);
    if (conn.isClosed || verified.peer.removed) return;
    this.linkUp(verified.peer, conn, "in", verified.id);
  }

  // --- the key route (key-route.ts) ---

  /** Answer `POST <endpoint>mesh/jwk/<kid>` with body `{challenge}`. */
  keyRequest(kid: string, body: unknown, ip: string | undefined): { status: number; body: object } {
    return this.dialer.keyRequest(kid, body, ip);
  }

  // --- the peers list (administrative frames) ---

  list(): MeshListing {
    return {
      self: {
        id: this.id,
        ...(this.endpoint_ ? { endpoint: this.endpoint_ } : {}),
        host: this.host,
      },
      ...(this.inert_ === undefined ? {} : { inert: this.inert_ }),
      peers: this.book.rows().map((row) => {
        const p = this.peers.get(row.endpoint);
        const link = p?.link;
        return {
          endpoint: row.endpoint,
          ...((p?.id ?? row.id) ? { id: p?.id ?? row.id } : {}),
          host: p?.host ?? new URL(row.endpoint).hostname,
          source: row.source,
          reachable: link !== undefined,
          ...(link ? { linked_since: link.since, direction: link.direction } : {}),
          ...(p?.lastError && !link ? { last_error: p.lastError } : {}),
        };
      }),
    };
  }

  async add(
    input: string,
    id?: string,
  ): Promise<{ endpoint: string; id?: string; added: boolean }> {
    const endpoint = normalizeEndpoint(input);
    if (endpoint === undefined)
      throw contractError("invalid_args", `not an endpoint: ${input} (an http(s) base URL)`);
    if (id !== undefined && !ID.test(id))
      throw contractError("invalid_args", "id: an instance id is 32 lower-case hex digits");
    if (endpoint === this.endpoint_ || id === this.id)
      throw contractError("invalid_args", `${endpoint} is this instance itself`);
    const row: PeerRow = id === undefined ? { endpoint } : { endpoint, id };
    const added = await this.book.addRow(row);
    const peer = this.endpoint_ === undefined ? undefined : this.book.upsert(row);
    if (peer !== undefined) {
      this.ensureDial(peer);
      this.options.changed();
    }
    return { ...row, added };
  }

  async remove(ref: string): Promise<{ endpoint: string; id?: string }> {
    const row = this.book.find(normalizeEndpoint(ref), ref);
    if (row === undefined) throw contractError("not_found", `no peer ${ref} in the mesh list`);
    if (row.source === "config")
      throw contractError(
        "invalid_args",
        `${row.endpoint} is listed in the config file's mesh.endpoints: remove it there (and restart)`,
      );
    await this.book.removeRow(row.endpoint);
    const peer = this.peers.get(row.endpoint);
    const id = peer?.id ?? row.id;
    // Listed in the config too: still trusted.
    if (peer !== undefined && row.source === "file") this.forget(peer);
    return id === undefined ? { endpoint: row.endpoint } : { endpoint: row.endpoint, id };
  }

  /** A peer no longer trusted: its links close and nothing redials it. */
  private forget(peer: Peer): void {
    this.book.drop(peer);
    clearTimeout(peer.retry);
    this.dialer.abandon("removed from the mesh list", peer);
    this.receiver.failAll("removed from the mesh list", peer);
    for (const link of [...peer.links]) this.end(link, CLOSE.removed, "removed from the mesh list");
    this.log.info({ endpoint: peer.endpoint, id: peer.id }, "mesh peer removed");
    this.options.changed();
  }

  // --- inbound frames ---

  private frame(conn: Connection, line: string): void {
    const link = this.links.get(conn);
    if (link !== undefined) {
      this.linkFrame(link, line);
      return;
    }
    if (this.dialer.has(conn)) {
      this.dialer.frame(conn, line);
      return;
    }
    if (this.receiver.has(conn)) {
      this.receiver.frame(conn, line);
      return;
    }
    if (this.acking.has(conn)) {
      this.refuse(conn, undefined, "a frame came before the ack");
      return;
    }
    if (conn.kind === "ws" && conn.identity === undefined) {
      const f = parseObject(line);
      if (f?.op === "hello" && f.role === "instance") {
        this.receiveHello(conn, f, line);
        return;
      }
      if (conn.meshOnly) {
        this.refuse(conn, undefined, "a mesh connection greets as an instance first");
        return;
      }
    }
    this.inner?.frame(conn, line);
  }

  private oversized(conn: Connection): void {
    if (this.links.has(conn) || !this.inMesh(conn)) {
      this.inner?.oversized(conn);
      return;
    }
    this.refuse(conn, undefined, "an oversized frame during the handshake");
  }

  private inMesh(conn: Connection): boolean {
    return (
      this.dialer.has(conn) || this.receiver.has(conn) || this.acking.has(conn) || conn.meshOnly
    );
  }

  /** Close a connection that broke the handshake's rules, after a refusal
   * its peer can read. */
  private refuse(conn: Connection, requestId: string | undefined, why: string): void {
    this.log.warn({ conn: conn.id, why }, "mesh connection refused");
    if (requestId !== undefined)
      conn.send(encodeFailure(requestId, { code: "forbidden", msg: why }));
    conn.close(CLOSE.refused, why.slice(0, 120));
  }

  /** A frame on a verified link: a request goes to dispatch (as its caller,
   * dispatch.ts), a reply to its waiting request, a topic frame to the
   * relays, an instance-rule frame to its handlers. */
  private linkFrame(link: Link<Peer>, line: string): void {
    link.lastHeard = Date.now();
    const f = parseObject(line);
    if (f === undefined || typeof f.op === "string") {
      this.inner?.frame(link.conn, line);
      return;
    }
    if (typeof f.ok === "boolean") {
      link.settle(f);
      return;
    }
    if (f.ev === "topic") {
      if (typeof f.topic !== "string" || typeof f.instance !== "string") return;
      const frame: RelayedFrame = {
        topic: f.topic,
        instance: f.instance,
        data: f.data,
        ...(f.snapshot === true ? { snapshot: true } : {}),
      };
      for (const r of this.relays) {
        if (r.topic !== f.topic) continue;
        try {
          r.onFrame(link.peer.id ?? "", frame);
        } catch (error) {
          this.log.error({ err: error, topic: f.topic }, "relay handler failed");
        }
      }
      return;
    }
    if (typeof f.mesh === "string" && f.request_id === undefined && f.topic === undefined) {
      if (f.mesh === "beat" || f.mesh === "proof") return;
      if (f.mesh === "about") {
        if (typeof f.host === "string" && f.host.length >= 1 && f.host.length <= 255) {
          link.peer.host = f.host;
          this.options.changed();
        }
        return;
      }
      for (const h of this.frameHandlers.get(f.mesh) ?? []) {
        try {
          h(link.peer.id ?? "", f as MeshFrame);
        } catch (error) {
          this.log.error({ err: error, kind: f.mesh }, "mesh frame handler failed");
        }
      }
    }
    // Connection events (`restarting`) need nothing: the close follows.
  }

  // --- the receiver's handshake (R) ---

  private receiveHello(conn: Connection, f: Record<string, unknown>, line: string): void {
    const requestId = typeof f.request_id === "string" ? f.request_id : undefined;
    const admitted = this.inner?.admit(conn, f);
    if (admitted === undefined || "code" in admitted) {
      if (admitted !== undefined) conn.send(encodeFailure(requestId, admitted));
      this.refuse(conn, undefined, admitted?.msg ?? "no dispatcher");
      return;
    }
    const claim = f.mesh as Claim;
    const refusal = this.claimRefusal(claim);
    if (typeof refusal === "string") this.refuse(conn, requestId, refusal);
    else this.receiver.begin(conn, refusal.peer, claim, line, requestId!);
  }

  private claimRefusal(claim: Claim): string | { peer: Peer } {
    return claimRefusal(claim, {
      ...{ id: this.id, endpoint: this.endpoint_, inert: this.inert_ },
      peers: this.peers,
    });
  }

  // --- the dialer's handshake (S) ---

  private ensureDial(peer: Peer, delayMs = 0): void {
    if (this.stopped || this.endpoint_ === undefined || peer.removed) return;
    if (peer.link !== undefined || this.dialer.dialing(peer) || peer.retry !== undefined) return;
    if (delayMs <= 0) {
      void this.dialer.dial(peer);
      return;
    }
    peer.retry = setTimeout(() => {
      peer.retry = undefined;
      this.ensureDial(peer);
    }, delayMs);
    peer.retry.unref();
  }

  private retryLater(peer: Peer): void {
    this.ensureDial(peer, backoffDelay(this.timers.backoffMs, peer.failures++));
  }

  // --- links ---

  private linkUp(peer: Peer, conn: Connection, direction: "in" | "out", id: string): void {
    if (peer.id !== id) this.log.info({ endpoint: peer.endpoint, id }, "mesh peer bound");
    peer.id = id;
    const link = new Link(peer, conn, direction);
    this.links.set(conn, link);
    peer.links.add(link);
    peer.failures = 0;
    peer.lastError = undefined;
    clearTimeout(peer.retry);
    peer.retry = undefined;
    conn.onClose(() => this.end(link, undefined, "the connection closed"));
    const { heartbeatMs, deadMs } = this.timers;
    link.startBeats(heartbeatMs, deadMs, () =>
      this.end(link, CLOSE.silent, `nothing heard for ${deadMs} ms`),
    );
    conn.send(JSON.stringify({ mesh: "about", host: this.host }));
    const current = peer.link;
    this.log.info(
      { endpoint: peer.endpoint, id, direction, glare: current !== undefined },
      "mesh link up",
    );
    if (current === undefined) {
      peer.link = link;
      this.activated(link);
      return;
    }
    // Glare: both verified; both sides keep the same one and close the other.
    const keep = this.preferred(current, link);
    const lose = keep === link ? current : link;
    peer.link = keep;
    this.end(lose, CLOSE.duplicate, "duplicate link (glare)");
    if (keep === link) this.activated(link);
  }

  /** The link dialed by the side whose endpoint sorts lower; of two dialed
   * by the same side, the newer (the older is likely dead already). */
  private preferred(a: Link<Peer>, b: Link<Peer>): Link<Peer> {
    if (a.direction === b.direction) return a.since > b.since ? a : b;
    const dialer = (l: Link<Peer>) => (l.direction === "out" ? this.endpoint_! : l.peer.endpoint);
    return dialer(a) < dialer(b) ? a : b;
  }

  /** A link became the peer's kept one: relays subscribe on it, listeners hear. */
  private activated(link: Link<Peer>): void {
    for (const r of this.relays) this.subscribeOn(r, link);
    this.options.changed();
    this.emitLink(link.peer, true);
  }

  /** Take a link out of service (closing it with `code` when this side ends it). */
  private end(link: Link<Peer>, code: number | undefined, why: string): void {
    if (!link.retire()) return;
    const { peer } = link;
    this.links.delete(link.conn);
    peer.links.delete(link);
    if (code !== undefined) link.conn.close(code, why);
    const wasKept = peer.link === link;
    this.log.info({ endpoint: peer.endpoint, id: peer.id, why, kept: wasKept }, "mesh link down");
    if (!wasKept) return;
    const next = [...peer.links].sort((a, b) => b.since - a.since)[0];
    peer.link = next;
    if (next !== undefined) {
      this.activated(next);
      return;
    }
    peer.lastError = why;
    this.options.changed();
    this.emitLink(peer, false);
    this.retryLater(peer);
  }

  private emitLink(peer: Peer, up: boolean): void {
    if (peer.id === undefined) return;
    for (const listener of this.linkListeners) {
      try {
        listener(peer.id, up);
      } catch (error) {
        this.log.error({ err: error }, "mesh link listener failed");
      }
    }
  }

  private linkTo(id: string): Link<Peer> | undefined {
    for (const p of this.peers.values()) if (p.id === id && p.link) return p.link;
    return undefined;
  }

  private requestOn(
    link: Link<Peer>,
    frame: Record<string, unknown>,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<LinkReply> {
    return link.request(`m${++this.counter}`, frame, timeoutMs);
  }

  private subscribeOn(relay: Relay, link: Link<Peer>): void {
    const frame = {
      op: "topic_subscribe",
      topic: relay.topic,
      ...(relay.caller === undefined ? {} : { caller: relay.caller }),
    };
    this.requestOn(link, frame).then(
      (reply) => {
        if (!reply.ok)
          this.log.warn(
            { topic: relay.topic, peer: link.peer.id, error: reply.error },
            "relay refused",
          );
      },
      (error: unknown) => {
        if (!(error instanceof ContractError && error.code === "instance_unreachable"))
          this.log.warn({ err: error, topic: relay.topic }, "relay subscribe failed");
      },
    );
  }
}
