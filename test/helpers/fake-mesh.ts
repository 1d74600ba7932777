import type { Identity } from "../../src/contract/envelope.js";
import { contractError } from "../../src/contract/errors.js";
import type { InstanceInfo } from "../../src/contract/peers.js";
import type { Dispatcher } from "../../src/instance/dispatch.js";
import type { LinkReply, MeshFrame, MeshPort, RelayedFrame } from "../../src/instance/mesh/port.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { memoryTransport } from "./memory-transport.js";

/**
 * A MeshPort in memory, for unit tests of what is built on the port: links are
 * switched by the test, relayed frames are fed by the test, and a request to a
 * peer is dispatched by that peer's real Dispatcher on a connection that
 * speaks for the request's `caller` (role `instance` without one) — what a
 * receiving link does.
 */
export class FakeMesh implements MeshPort {
  readonly configured = true;
  readonly sent: { to: string; frame: Record<string, unknown> }[] = [];
  private readonly up = new Set<string>();
  private readonly linkListeners: ((peer: string, up: boolean) => void)[] = [];
  private readonly relays = new Map<string, ((peer: string, f: RelayedFrame) => void)[]>();
  readonly relayCallers = new Map<string, Identity | undefined>();
  private readonly links = new WeakMap<Connection, string>();
  /** Peers whose requests never get an answer (the timeout path). */
  readonly silent = new Set<string>();

  constructor(
    readonly id: string,
    readonly peers: string[],
    private readonly dispatchers: Map<string, Dispatcher> = new Map(),
  ) {}

  instances(): InstanceInfo[] {
    return [
      { id: this.id, host: "here", reachable: true },
      ...this.peers.map((p) => ({ id: p, host: "there", reachable: this.up.has(p) })),
    ];
  }
  linked(): string[] {
    return [...this.up];
  }
  anyUnreachable(): boolean {
    return this.peers.some((p) => !this.up.has(p));
  }
  peerOf(conn: Connection): string | undefined {
    return this.links.get(conn);
  }
  /** Mark `conn` as the verified link to `peer`. */
  markLink(conn: Connection, peer: string): void {
    this.links.set(conn, peer);
  }
  setLink(peer: string, up: boolean): void {
    if (up) this.up.add(peer);
    else this.up.delete(peer);
    for (const l of this.linkListeners) l(peer, up);
  }

  async request(
    to: string,
    frame: Record<string, unknown>,
    timeoutMs = 10_000,
  ): Promise<LinkReply> {
    this.sent.push({ to, frame });
    if (!this.up.has(to)) throw contractError("instance_unreachable", `no link to ${to}`);
    const d = this.dispatchers.get(to);
    if (d === undefined || this.silent.has(to)) {
      await new Promise((r) => setTimeout(r, timeoutMs));
      throw contractError("instance_unreachable", `no reply from ${to} in ${timeoutMs} ms`);
    }
    const transport = memoryTransport();
    const conn = new Connection(transport, d);
    conn.greet((frame.caller as Identity | undefined) ?? { role: "instance" });
    transport.feed(JSON.stringify({ ...frame, request_id: "link-1" }));
    for (let i = 0; i < 500; i++) {
      const reply = transport.frames().find((f) => f.request_id === "link-1");
      if (reply !== undefined) {
        const { ok, request_id: _r, error, ...result } = reply;
        return ok === true
          ? { ok: true, result }
          : { ok: false, error: error as { code: never; msg: string } };
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error("the peer's dispatcher never answered");
  }

  relay(
    topic: string,
    caller: Identity | undefined,
    onFrame: (peer: string, frame: RelayedFrame) => void,
  ): () => void {
    this.relayCallers.set(topic, caller);
    const list = this.relays.get(topic) ?? [];
    list.push(onFrame);
    this.relays.set(topic, list);
    return () => list.splice(list.indexOf(onFrame), 1);
  }
  /** Whether a relay of `topic` is held now. */
  relaying(topic: string): boolean {
    return (this.relays.get(topic)?.length ?? 0) > 0;
  }
  /** A frame from `peer` on a relayed topic. */
  emit(peer: string, frame: RelayedFrame): void {
    for (const f of this.relays.get(frame.topic) ?? []) f(peer, frame);
  }

  send(_to: string, _frame: MeshFrame): boolean {
    return false;
  }
  onFrame(): void {}
  onLink(listener: (peer: string, up: boolean) => void): void {
    this.linkListeners.push(listener);
  }
}
