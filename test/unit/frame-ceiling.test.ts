import { describe, expect, it } from "vitest";
import {
  encodeFailure,
  encodeReply,
  encodeTopicFrame,
  fitPeers,
  MAX_FRAME_BYTES,
  type PeersData,
  topicDataBudget,
  utf8Length,
} from "../../src/contract/index.js";
import { parseTopic } from "../../src/contract/topics.js";
import { TopicHub } from "../../src/instance/topic-hub.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { silentLogger } from "../../src/util/logger.js";
import { memoryTransport } from "../helpers/memory-transport.js";

// Issue 8, item 12: the encoders never write a frame over MAX_FRAME_BYTES.

const INSTANCE = "0123456789abcdef0123456789abcdef";
const bytes = (line: string) => Buffer.byteLength(line);

describe("utf8Length", () => {
  it.each([
    "plain",
    "é€",
    "emoji 😀 and more",
    "lone \ud800 high",
    "lone \udc00 low",
    "high at the end \ud800",
  ])("counts %j as Buffer does", (text) => {
    expect(utf8Length(text)).toBe(Buffer.byteLength(text));
  });
});

describe("encodeReply", () => {
  it("answers internal_error, with the request_id, when the result cannot fit", () => {
    const line = encodeReply("r1", { value: "v".repeat(MAX_FRAME_BYTES) });
    expect(JSON.parse(line)).toEqual({
      ok: false,
      request_id: "r1",
      error: { code: "internal_error", msg: expect.stringContaining("MAX_FRAME_BYTES") },
    });
  });

  it("writes a result that fits as is", () => {
    expect(JSON.parse(encodeReply("r2", { a: 1 }))).toEqual({ ok: true, request_id: "r2", a: 1 });
  });
});

describe("encodeFailure", () => {
  it("cuts a long message and leaves out a request_id too long to be one", () => {
    const line = encodeFailure("i".repeat(10_000), {
      code: "invalid_args",
      msg: "m".repeat(MAX_FRAME_BYTES),
    });
    const parsed = JSON.parse(line) as { request_id?: string; error: { msg: string } };
    expect(parsed.request_id).toBeUndefined();
    expect(parsed.error.msg.endsWith("…")).toBe(true);
    expect(bytes(line)).toBeLessThan(64 * 1024);
  });
});

describe("encodeTopicFrame", () => {
  it("carries exactly topicDataBudget bytes of data, and not one more", () => {
    const budget = topicDataBudget("kv:ns", INSTANCE);
    const data = (n: number) => `"${"d".repeat(n - 2)}"`;
    const line = encodeTopicFrame("kv:ns", INSTANCE, data(budget), true);
    expect(line).toBeDefined();
    expect(bytes(line!)).toBe(MAX_FRAME_BYTES);
    expect(encodeTopicFrame("kv:ns", INSTANCE, data(budget + 1), true)).toBeUndefined();
  });
});

describe("fitPeers", () => {
  const row = (sid: string, at: number, cwd = "/w") => ({
    sid,
    instance: INSTANCE,
    repo: "r",
    ws: "w",
    cwd,
    protocol_version: 3,
    last_activity_at: at,
  });
  const lost = (sid: string, at: number) => ({
    sid,
    instance: INSTANCE,
    repo: "r",
    ws: "w",
    cwd: "/w",
    last_seen_at: at,
  });
  const data: PeersData = {
    peers: [row("p-new", 30, "x".repeat(100)), row("p-old", 10, "x".repeat(100))],
    last_live: [lost("l-new", 20), lost("l-old", 5)],
    instances: [],
  };

  it("leaves a value that fits alone", () => {
    expect(fitPeers(data, MAX_FRAME_BYTES)).toEqual({ data, leftOut: 0 });
  });

  it("leaves out whole rows: lost ones longest gone first, then the least recently active", () => {
    const full = utf8Length(JSON.stringify(data));
    const cut = (budget: number) => {
      const fit = fitPeers(data, budget);
      expect(utf8Length(JSON.stringify(fit.data))).toBeLessThanOrEqual(budget);
      return [...fit.data.peers, ...fit.data.last_live].map((r) => r.sid);
    };
    expect(cut(full - 1)).toEqual(["p-new", "p-old", "l-new"]);
    expect(cut(full - 200)).toEqual(["p-new", "p-old"]);
    expect(cut(full - 300)).toEqual(["p-new"]);
  });
});

describe("the topic hub", () => {
  function subscribed(kind: string, snapshot: () => unknown) {
    const hub = new TopicHub(INSTANCE, silentLogger);
    hub.provideSnapshot(kind as never, snapshot);
    const transport = memoryTransport();
    const conn = new Connection(transport, { frame: () => {}, oversized: () => {} });
    conn.greet({ role: "user" });
    return { hub, conn, frames: transport.frames };
  }

  it("refuses to publish an element no frame can carry, and sends the rest", () => {
    const { hub, conn, frames } = subscribed("kv", () => ({ entries: [] }));
    hub.subscribe(conn, parseTopic("kv:ns")!);
    const huge = { key: "big", value: "v".repeat(MAX_FRAME_BYTES), updated_at: 1 };
    expect(hub.publish("kv:ns", { entries: [huge] })).toBe(1);
    expect(hub.publish("kv:ns", { entries: [{ key: "k", value: 1, updated_at: 2 }] })).toBe(0);
    expect(frames().map((f) => (f.data as { entries: unknown[] }).entries.length)).toEqual([0, 1]);
  });

  it("leaves an element too large for any frame out of a snapshot", () => {
    const entries = [
      { key: "a", value: 1, updated_at: 1 },
      { key: "big", value: "v".repeat(MAX_FRAME_BYTES), updated_at: 2 },
      { key: "c", value: 3, updated_at: 3 },
    ];
    const { hub, conn, frames } = subscribed("kv", () => ({ entries }));
    hub.subscribe(conn, parseTopic("kv:ns")!);
    expect(frames()).toEqual([
      expect.objectContaining({
        snapshot: true,
        data: { entries: [entries[0], entries[2]] },
      }),
    ]);
  });
});
