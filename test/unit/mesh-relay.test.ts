import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { foldTopicFrame } from "../../src/contract/index.js";
import { parseTopic } from "../../src/contract/topics.js";
import { OwnerIndex } from "../../src/instance/mesh/owners.js";
import { MeshRelay, RELAY_RETENTION_MS, RELAYED_KINDS } from "../../src/instance/mesh/relay.js";
import { TopicHub } from "../../src/instance/topic-hub.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { Clock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeMesh } from "../helpers/fake-mesh.js";
import { memoryTransport } from "../helpers/memory-transport.js";

const A = "a".repeat(32);
const B = "b".repeat(32);
const C = "c".repeat(32);
const SID = "0c0c0c0c-0c0c-4c0c-8c0c-0c0c0c0c0c0c";

function subscriber(hub: TopicHub, name: string) {
  const transport = memoryTransport();
  const conn = new Connection(transport, { frame: () => {}, oversized: () => {} });
  conn.greet({ role: "user" });
  hub.subscribe(conn, parseTopic(name)!);
  return { conn, frames: transport.frames };
}

function peersValue(instance: string, sids: string[]) {
  return {
    peers: sids.map((sid) => ({
      sid,
      instance,
      repo: "r",
      ws: "w",
      cwd: "/r",
      protocol_version: 3,
    })),
    last_live: [],
    instances: [{ id: instance, host: "h", reachable: true }],
  };
}

function setUp() {
  const hub = new TopicHub(A, silentLogger);
  hub.provideValue("peers", () => peersValue(A, []));
  hub.provideValue("agents", () => ({ agents: [] }));
  const port = new FakeMesh(A, [B, C]);
  port.setLink(B, true);
  port.setLink(C, true);
  const owners = new OwnerIndex();
  const clock = new Clock(0);
  const relay = new MeshRelay(port, hub, owners, clock, silentLogger);
  return { hub, port, owners, relay, clock };
}

describe("relaying the per-instance topics", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("relays every per_instance_whole topic, as a person (the topic table decides which)", () => {
    expect([...RELAYED_KINDS].sort()).toEqual([
      "agents",
      "llm_requests",
      "llm_status",
      "peers",
      "session_errors",
    ]);
    const { port } = setUp();
    expect(port.relaying("peers")).toBe(true);
    expect(port.relayCallers.get("peers")).toEqual({ role: "user" });
  });

  it("gives a subscriber one frame per instance, each as its instance sent it, folded per instance", () => {
    const { hub, port } = setUp();
    const fromC = peersValue(C, [SID]);
    port.emit(C, { topic: "peers", instance: C, data: fromC, snapshot: true });
    port.emit(B, { topic: "peers", instance: B, data: peersValue(B, []), snapshot: true });
    const { frames } = subscriber(hub, "peers");
    expect(frames().map((f) => f.instance)).toEqual([A, C, B]);
    expect(frames()[0]!.snapshot).toBe(true);
    expect(frames()[1]).toEqual({ ev: "topic", topic: "peers", instance: C, data: fromC });
    let held: unknown;
    for (const f of frames()) held = foldTopicFrame(held, f as never);
    expect(Object.keys(held as object).sort()).toEqual([A, B, C]);

    // An update from C replaces C's value only.
    const later = peersValue(C, []);
    port.emit(C, { topic: "peers", instance: C, data: later });
    vi.advanceTimersByTime(200);
    expect(frames()).toHaveLength(4);
    held = foldTopicFrame(held, frames()[3] as never);
    expect((held as Record<string, unknown>)[C]).toEqual(later);
    expect((held as Record<string, { peers: unknown[] }>)[B]!.peers).toEqual([]);
  });

  it("takes only a peer's own frames, and passes none of them to a mesh link", () => {
    const { hub, port } = setUp();
    // B passing on what C said is second-hand: not taken.
    port.emit(B, { topic: "peers", instance: C, data: peersValue(C, [SID]), snapshot: true });
    const person = subscriber(hub, "peers");
    expect(person.frames().map((f) => f.instance)).toEqual([A]);

    port.emit(C, { topic: "peers", instance: C, data: peersValue(C, [SID]), snapshot: true });
    const transport = memoryTransport();
    const link = new Connection(transport, { frame: () => {}, oversized: () => {} });
    link.greet({ role: "user" });
    port.markLink(link, B);
    hub.subscribe(link, parseTopic("peers")!);
    port.emit(C, { topic: "peers", instance: C, data: peersValue(C, []) });
    vi.advanceTimersByTime(500);
    expect(transport.frames().map((f) => f.instance)).toEqual([A]);
    expect(person.frames().map((f) => f.instance)).toEqual([A, C, C]);
  });

  it("coalesces a storm of relayed values to one frame per 100 ms per instance, ending on the latest", () => {
    const { hub, port } = setUp();
    const { frames } = subscriber(hub, "peers");
    let last: unknown;
    for (let ms = 0; ms < 1000; ms++) {
      for (const peer of [B, C]) {
        last = peersValue(peer, ms % 2 === 0 ? [SID] : []);
        (last as { n?: number }).n = ms;
        port.emit(peer, { topic: "peers", instance: peer, data: last });
      }
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(200);
    const fromC = frames().filter((f) => f.instance === C);
    expect(fromC.length).toBeGreaterThanOrEqual(9);
    expect(fromC.length).toBeLessThanOrEqual(12);
    expect((fromC.at(-1)!.data as { n: number }).n).toBe(999);
  });

  it("relays agents only while someone here holds it", () => {
    const { hub, port } = setUp();
    expect(port.relaying("agents")).toBe(false);
    const { conn } = subscriber(hub, "agents");
    expect(port.relaying("agents")).toBe(true);
    hub.unsubscribe(conn, "agents");
    expect(port.relaying("agents")).toBe(false);
  });

  it("feeds the owner index from peers frames", () => {
    const { port, owners } = setUp();
    port.emit(C, { topic: "peers", instance: C, data: peersValue(C, [SID]), snapshot: true });
    expect(owners.liveOwner(SID)).toBe(C);
    port.emit(C, { topic: "peers", instance: C, data: peersValue(C, []), snapshot: true });
    expect(owners.liveOwner(SID)).toBeUndefined();
  });

  it("keeps a disconnected peer's values, then discards them after 7 days", () => {
    const { hub, port, owners, relay, clock } = setUp();
    port.emit(C, { topic: "peers", instance: C, data: peersValue(C, [SID]), snapshot: true });
    port.setLink(C, false);
    expect(
      subscriber(hub, "peers")
        .frames()
        .map((f) => f.instance),
    ).toEqual([A, C]);
    expect(owners.liveOwner(SID)).toBe(C);
    relay.expire(clock.now() + RELAY_RETENTION_MS - 1000);
    expect(owners.liveOwner(SID)).toBe(C);
    relay.expire(clock.now() + RELAY_RETENTION_MS + 1000);
    expect(owners.liveOwner(SID)).toBeUndefined();
    expect(
      subscriber(hub, "peers")
        .frames()
        .map((f) => f.instance),
    ).toEqual([A]);
  });
});
