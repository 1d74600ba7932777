import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { foldTopicFrame, MAX_FRAME_BYTES } from "../../src/contract/index.js";
import { parseTopic } from "../../src/contract/topics.js";
import { snapshotChunks, TopicHub, VALUE_TOPIC_PACE } from "../../src/instance/topic-hub.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { silentLogger } from "../../src/util/logger.js";
import { memoryTransport } from "../helpers/memory-transport.js";

const INSTANCE = "0123456789abcdef0123456789abcdef";

function recordingConnection(): { conn: Connection; frames: () => Record<string, unknown>[] } {
  const transport = memoryTransport();
  const conn = new Connection(transport, { frame: () => {}, oversized: () => {} });
  conn.greet({ role: "user" });
  return { conn, frames: transport.frames };
}

function topic(name: string) {
  const parsed = parseTopic(name);
  if (parsed === undefined) throw new Error(`not a topic: ${name}`);
  return parsed;
}

function hubServing(
  values: Record<string, () => unknown>,
  snapshots: Record<string, () => unknown> = {},
) {
  const hub = new TopicHub(INSTANCE, silentLogger);
  for (const [kind, provider] of Object.entries(values)) hub.provideValue(kind as never, provider);
  for (const [kind, provider] of Object.entries(snapshots))
    hub.provideSnapshot(kind as never, provider);
  return hub;
}

describe("value topics in the hub", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("suppress a value equal to the last one sent, the snapshot included", () => {
    let value = { peers: ["a"], last_live: [] };
    const hub = hubServing({ peers: () => value });
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, topic("peers"));
    expect(frames()).toHaveLength(1);
    expect(frames()[0]).toMatchObject({ snapshot: true, data: value });

    hub.invalidate("peers");
    vi.advanceTimersByTime(1000);
    expect(frames()).toHaveLength(1);

    value = { peers: ["a", "b"], last_live: [] };
    hub.invalidate("peers");
    vi.advanceTimersByTime(1000);
    expect(frames()).toHaveLength(2);
    expect(frames()[1]).toEqual({ ev: "topic", topic: "peers", instance: INSTANCE, data: value });
  });

  it("send a value changing on every tick at most once per 100 ms, ending on the latest", () => {
    let n = 0;
    const hub = hubServing({ peers: () => ({ peers: [n], last_live: [] }) });
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, topic("peers"));
    for (let ms = 0; ms < 1000; ms++) {
      n++;
      hub.invalidate("peers");
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(500);
    const deltas = frames().slice(1);
    expect(deltas.length).toBeLessThanOrEqual(11);
    expect(deltas.length).toBeGreaterThanOrEqual(9);
    expect(deltas.at(-1)!.data).toEqual({ peers: [1000], last_live: [] });
  });

  it("send a large value changing all the time within its byte budget, ending on the latest", () => {
    // 5,000 sessions coming and going under a long last_live: a value of
    // ~200 KB that changes every millisecond for a minute.
    let n = 0;
    const filler = "x".repeat(200_000);
    const hub = hubServing({ peers: () => ({ peers: [n], last_live: [filler] }) });
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, topic("peers"));
    const seconds = 60;
    for (let ms = 0; ms < seconds * 1000; ms++) {
      n++;
      hub.invalidate("peers");
      vi.advanceTimersByTime(1);
    }
    // Once the changes stop, the last value still arrives.
    vi.advanceTimersByTime(10_000);
    const deltas = frames().slice(1);
    const bytes = deltas.reduce((sum, f) => sum + JSON.stringify(f).length, 0);
    const { burstBytes, bytesPerSecond } = VALUE_TOPIC_PACE;
    expect(bytes).toBeLessThanOrEqual(burstBytes + bytesPerSecond * (seconds + 10));
    // Ten frames a second would have been 600 frames, 120 MB.
    expect(deltas.length).toBeLessThan(40);
    expect(deltas.at(-1)!.data).toEqual({ peers: [seconds * 1000], last_live: [filler] });
  });
});

describe("element snapshots", () => {
  it("larger than a frame go out as a snapshot and element frames that fold to the same value", () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({
      key: `k${i}`,
      value: "v".repeat(400_000),
      updated_at: i,
    }));
    const hub = hubServing({}, { kv: () => ({ entries }) });
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, topic("kv:big"));
    const sent = frames();
    expect(sent.length).toBeGreaterThan(1);
    expect(sent[0]!.snapshot).toBe(true);
    expect(sent.slice(1).every((f) => f.snapshot === undefined)).toBe(true);
    for (const f of sent)
      expect(Buffer.byteLength(JSON.stringify(f))).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    const held = sent.reduce<unknown>((h, f) => foldTopicFrame(h, f as never), undefined);
    expect(held).toEqual({ entries });
  });

  it("fit in one frame when small (inbox, whose data is the list itself)", () => {
    expect(snapshotChunks([{ mid: "a" }, { mid: "b" }], undefined)).toEqual([
      '[{"mid":"a"},{"mid":"b"}]',
    ]);
    expect(snapshotChunks({ entries: [] }, "entries")).toEqual(['{"entries":[]}']);
    expect(snapshotChunks([1, 2, 3], undefined, 6)).toEqual(["[1,2]", "[3]"]);
  });
});
