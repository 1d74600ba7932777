import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { foldTopicFrame, MAX_FRAME_BYTES } from "../../src/contract/index.js";
import { Connection } from "../../src/instance/connection.js";
import { snapshotChunks, TopicHub } from "../../src/instance/topic-hub.js";
import type { Channel } from "../../src/instance/transport/channel.js";

const INSTANCE = "0123456789abcdef0123456789abcdef";

function recordingConnection(): { conn: Connection; frames: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const channel: Channel = {
    kind: "uds",
    write: (line) => lines.push(line),
    backlog: () => 0,
    onDrain: () => {},
    pauseReading: () => {},
    resumeReading: () => {},
    close: () => {},
  };
  const conn = new Connection(channel);
  conn.identity = { role: "user" };
  return { conn, frames: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
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
    const hub = new TopicHub(INSTANCE, { peers: () => value }, {}, pino({ level: "silent" }));
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, "peers", "peers", undefined);
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
    const hub = new TopicHub(
      INSTANCE,
      { peers: () => ({ peers: [n], last_live: [] }) },
      {},
      pino({ level: "silent" }),
    );
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, "peers", "peers", undefined);
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
});

describe("element snapshots", () => {
  it("larger than a frame go out as a snapshot and element frames that fold to the same value", () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({
      key: `k${i}`,
      value: "v".repeat(400_000),
      updated_at: i,
    }));
    const hub = new TopicHub(INSTANCE, {}, { kv: () => ({ entries }) }, pino({ level: "silent" }));
    const { conn, frames } = recordingConnection();
    hub.subscribe(conn, "kv:big", "kv", "big");
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
    expect(snapshotChunks([1, 2, 3], undefined, 4)).toEqual(["[1,2]", "[3]"]);
  });
});
