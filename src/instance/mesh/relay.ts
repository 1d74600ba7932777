import type { Identity } from "../../contract/envelope.js";
import { TOPIC_ATTRIBUTES, TOPIC_KINDS, type TopicKind } from "../../contract/topics.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { TopicHub } from "../topic-hub.js";
import type { OwnerIndex } from "./owners.js";
import type { MeshPort, RelayedFrame } from "./port.js";

/** How long a disconnected peer's values are kept (contract §8.1). */
export const RELAY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The topics relayed from every peer: those whose frames each instance
 * produces for itself (`per_instance_whole`: peers, agents, session_errors,
 * llm_requests, llm_status). Read from the topic table. */
export const RELAYED_KINDS: readonly TopicKind[] = TOPIC_KINDS.filter(
  (k) => TOPIC_ATTRIBUTES[k].granularity === "per_instance_whole",
);

/** Relayed subscriptions are made as a person: every relayed topic admits
 * `user`, none admits `instance`, and a `session` caller would narrow what a
 * peer returns to that session's view (DR-0048). */
const RELAY_CALLER: Identity = { role: "user" };

/**
 * The relay of the per-instance topics (contract §8.1): subscribes to them on
 * every peer through the port, holds each peer's latest value unchanged
 * (`instance` kept, never recomputed), and hands it to the topic hub, which
 * passes it to local subscribers through their egress queues. `peers` is
 * always relayed — it is also where the owner of a sid is read from; the
 * others only while someone here holds them, since holding them on a peer
 * starts its upstream work (the harness poll behind `agents`). A peer's
 * values outlive its link, shown unreachable by its `instances` row, until it
 * comes back or 7 days pass.
 */
export class MeshRelay {
  /** topic → instance → latest data JSON. */
  private readonly held = new Map<string, Map<string, string>>();
  /** Running relays, by topic: the port's function that ends one. */
  private readonly running = new Map<string, () => void>();
  /** Peers whose link is down, and since when (for the 7-day discard). */
  private readonly downSince = new Map<string, number>();
  private readonly sweep: NodeJS.Timeout;
  /** Frames taken from peers, for the bench and the log. */
  received = 0;

  constructor(
    private readonly mesh: MeshPort,
    private readonly hub: TopicHub,
    private readonly owners: OwnerIndex,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    hub.relayFrom({
      held: (name) => this.held.get(name)?.entries() ?? [],
      isLink: (conn) => mesh.peerOf(conn) !== undefined,
    });
    const kinds = RELAYED_KINDS.filter((k) => hub.serves(k));
    if (kinds.includes("peers")) this.start("peers");
    hub.onHeld((name) => {
      if (name === "peers" || !kinds.includes(name as TopicKind)) return;
      if (hub.localHolders(name) > 0) this.start(name);
      else this.stop(name);
    });
    mesh.onLink((peer, up) => {
      if (up) this.downSince.delete(peer);
      else this.downSince.set(peer, clock.now());
    });
    // The 7-day discard needs no precision: look once an hour.
    this.sweep = setInterval(() => this.expire(), 3_600_000);
    this.sweep.unref();
  }

  private start(topic: string): void {
    // Held from the start: the port subscribes on each link as it comes up
    // (with no peers, never).
    if (this.running.has(topic)) return;
    this.running.set(
      topic,
      this.mesh.relay(topic, RELAY_CALLER, (peer, frame) => this.take(peer, frame)),
    );
  }

  private stop(topic: string): void {
    const end = this.running.get(topic);
    if (end === undefined) return;
    this.running.delete(topic);
    end();
    // Nobody here holds it: what peers said goes stale, so it is not kept.
    this.held.delete(topic);
  }

  /** One frame from `peer`. Only the peer's own frames are taken: a peer
   * passes on nobody else's (links get own frames only), and each instance
   * hears every other one itself, so a frame about a third instance would be
   * second-hand and possibly older than the first-hand one. */
  private take(peer: string, frame: RelayedFrame): void {
    if (frame.instance !== peer || !this.running.has(frame.topic)) return;
    this.received++;
    let json: string;
    try {
      json = JSON.stringify(frame.data);
    } catch (error) {
      this.log.warn({ err: error, peer, topic: frame.topic }, "relayed frame not taken");
      return;
    }
    let byInstance = this.held.get(frame.topic);
    if (byInstance === undefined) {
      byInstance = new Map();
      this.held.set(frame.topic, byInstance);
    }
    if (byInstance.get(peer) === json) return;
    byInstance.set(peer, json);
    if (frame.topic === "peers") this.owners.peers(peer, frame.data);
    else if (frame.topic === "agents") this.owners.agents(peer, frame.data);
    this.hub.relayedChanged(frame.topic, peer, json);
  }

  /** Discard the values of peers unreachable for 7 days. */
  expire(now = this.clock.now()): void {
    for (const [peer, since] of this.downSince) {
      if (now - since < RELAY_RETENTION_MS) continue;
      this.downSince.delete(peer);
      for (const byInstance of this.held.values()) byInstance.delete(peer);
      this.owners.drop(peer);
      this.log.info({ peer }, "relayed values discarded: unreachable for 7 days");
    }
  }

  dispose(): void {
    clearInterval(this.sweep);
    for (const topic of [...this.running.keys()]) this.stop(topic);
  }
}
