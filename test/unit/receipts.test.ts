import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import {
  type ReceiptEvent,
  ReceiptScan,
  receiptEvidence,
} from "../../src/harness/receipt-evidence.js";
import { parseRecord } from "../../src/harness/transcript-lines.js";
import { Receipts, UNSEEN_AFTER_MS } from "../../src/instance/messaging/receipts.js";
import { TopicHub } from "../../src/instance/topic-hub.js";
import { silentLogger } from "../../src/util/logger.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

afterEach(closeInboxes);

// The real Claude Code 2.1.328's records of two delivered messages: one by
// its messaging socket while idle (a `user` record), one while a command ran
// (an `attachment` of type `queued_command`); each envelope also sits in a
// `queue-operation` record, which is bookkeeping, not the model's input.
const FIXTURE = "test/fixtures/claude-code/transcripts/2.1.328-peer-messages.jsonl";
const LINES = readFileSync(FIXTURE, "utf8").trim().split("\n");
const FIXTURE_SID = "3d04d386-4f18-4430-90a2-ec907a6d2f91";
const FIXTURE_NOW = Date.parse("2026-12-02T02:05:00.000Z");
const FIRST = "4732a4c0e79430b0ae270cf0a1d5746f/1";
const SECOND = "4732a4c0e79430b0ae270cf0a1d5746f/2";

function scan(lines: readonly string[], sid = FIXTURE_SID): ReceiptEvent[] {
  const s = new ReceiptScan("claude", sid, () => FIXTURE_NOW);
  const out: ReceiptEvent[] = [];
  for (const l of lines) s.line(l, parseRecord(l), out);
  return out;
}

describe("receipt evidence in a transcript", () => {
  it("finds each delivered mid once, in the model's input, and reads it at the next answer", () => {
    const events = scan(LINES).filter((e) => e.kind === "seen" || e.kind === "read");
    expect(events.map((e) => [e.kind, "mid" in e ? e.mid : ""])).toEqual([
      ["seen", FIRST],
      ["read", FIRST],
      ["seen", SECOND],
      ["read", SECOND],
    ]);
    const seen = events.find((e) => e.kind === "seen" && e.mid === FIRST)!;
    expect(seen.at).toBe(Date.parse("2026-12-02T02:02:31.262Z"));
    const read = events.find((e) => e.kind === "read" && e.mid === SECOND)!;
    expect(read.at).toBe(Date.parse("2026-12-02T02:02:39.450Z"));
  });

  it("never counts a queue-operation record, which only says the harness queued it", () => {
    const queued = LINES.filter((l) => l.includes('"type":"queue-operation"'));
    expect(queued.some((l) => l.includes("ccmsg-mid="))).toBe(true);
    expect(scan(queued)).toEqual([]);
  });

  it("stamps nothing for an assistant record that quotes a mid", () => {
    const quoting = JSON.stringify({
      type: "assistant",
      timestamp: "2026-12-02T02:03:00.000Z",
      message: {
        role: "assistant",
        stop_reason: "end_turn",
        content: [{ type: "text", text: `I got <cross-session-message ccmsg-mid="${FIRST}">` }],
      },
    });
    expect(receiptEvidence("claude", quoting, parseRecord(quoting))).toEqual({
      kind: "answer",
      at: Date.parse("2026-12-02T02:03:00.000Z"),
      idle: true,
    });
    expect(scan([quoting]).filter((e) => e.kind === "seen")).toEqual([]);
  });

  it("counts a mid in a tool's output: ccmsg inbox took the message and showed it", () => {
    const result = (text: string) =>
      JSON.stringify({
        type: "user",
        timestamp: "2026-12-02T02:04:00.000Z",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "t1", content: text }],
        },
      });
    for (const shown of [
      `[${FIRST}] api: schema: hello`,
      JSON.stringify({ messages: [{ mid: SECOND, text: "hello" }] }),
    ]) {
      const line = result(shown);
      expect(receiptEvidence("claude", line, parseRecord(line))).toMatchObject({ kind: "input" });
      const mids = (receiptEvidence("claude", line, parseRecord(line)) as { mids: string[] }).mids;
      expect(mids).toHaveLength(1);
    }
  });

  it("reads a Codex rollout's user input and not the model's output", () => {
    const mid = "4732a4c0e79430b0ae270cf0a1d5746f/3";
    const line = (role: string) =>
      JSON.stringify({
        timestamp: "2026-12-02T02:04:00.000Z",
        type: "response_item",
        payload: {
          type: "message",
          role,
          content: [{ type: "input_text", text: `ccmsg-mid="${mid}"` }],
        },
      });
    expect(receiptEvidence("codex", line("user"), parseRecord(line("user")))).toMatchObject({
      kind: "input",
      mids: [mid],
    });
    expect(
      receiptEvidence("codex", line("assistant"), parseRecord(line("assistant"))),
    ).toMatchObject({
      kind: "answer",
    });
  });
});

const INSTANCE = "4732a4c0e79430b0ae270cf0a1d5746f";
const B = "00000000-0000-4000-8000-00000000000b";
const C = "00000000-0000-4000-8000-00000000000c";

function message(counter: number): InboxMessage {
  return {
    mid: `${INSTANCE}/${counter}`,
    from: "user",
    from_label: "user",
    text: "x",
    sent_at: Date.now(),
  };
}

function rig() {
  const { inbox } = openInbox();
  const hub = new TopicHub(INSTANCE, silentLogger);
  let listener: (events: ReceiptEvent[]) => void = () => {};
  const told: string[] = [];
  const receipts = new Receipts({
    ...{ instanceId: INSTANCE, inbox, hub, log: silentLogger },
    evidence: { onReceipts: (l) => (listener = l), receiptsUnavailable: () => undefined },
    live: () => true,
    label: (sid) => sid,
    reoffer: () => {},
    notify: (_sid, text) => told.push(text),
  });
  const settle = () => new Promise((r) => setTimeout(r, 20));
  return { inbox, hub, receipts, told, tell: (events: ReceiptEvent[]) => listener(events), settle };
}

describe("receipts from the evidence", () => {
  it("stamps a mid only from the transcript of the session it was delivered to", async () => {
    const { inbox, receipts, tell, settle } = rig();
    await inbox.recordDelivered(B, 1, message(1));
    tell([{ kind: "seen", sid: C, mid: `${INSTANCE}/1`, at: 5 }]);
    await settle();
    expect(receipts.read([`${INSTANCE}/1`], undefined)[0]).toMatchObject({ state: "delivered" });
    tell([{ kind: "seen", sid: B, mid: `${INSTANCE}/1`, at: 7 }]);
    tell([{ kind: "read", sid: B, mid: `${INSTANCE}/1`, at: 9 }]);
    await settle();
    expect(receipts.read([`${INSTANCE}/1`], undefined)[0]).toMatchObject({
      state: "read",
      route: "socket",
      seen_at: 7,
      read_at: 9,
    });
    receipts.dispose();
  });

  it("keeps a sighting that came before the delivery was recorded", async () => {
    const { inbox, receipts, tell, settle } = rig();
    tell([{ kind: "seen", sid: B, mid: `${INSTANCE}/2`, at: 11 }]);
    await settle();
    await inbox.recordDelivered(B, 2, message(2), "codex");
    await settle();
    expect(receipts.read([`${INSTANCE}/2`], undefined)[0]).toMatchObject({
      state: "seen",
      seen_at: 11,
    });
    receipts.dispose();
  });

  it("offers a message again by the other side when its transcript moved on without it", async () => {
    const { inbox, receipts, tell, settle } = rig();
    await inbox.recordDelivered(B, 3, message(3));
    await settle();
    tell([{ kind: "turn", sid: B, inputsAt: Date.now() + 5000, at: Date.now() + 6000 }]);
    await settle();
    expect(receipts.read([`${INSTANCE}/3`], undefined)[0]).toMatchObject({ state: "unseen" });
    // Held again, for the lane's receivers only: route (a) passes it by.
    expect(inbox.peekHeld(B, Date.now(), 1e9)?.map((h) => h.counter)).toEqual([3]);
    expect(inbox.claimOldest(B, Date.now(), 1e9, new Set())).toBeUndefined();
    receipts.dispose();
  });

  it("never judges a message its harness parked for its person lost: that gate is the person's", async () => {
    const { inbox, receipts, tell, settle } = rig();
    await inbox.recordDelivered(B, 4, message(4), "socket", true);
    await settle();
    tell([{ kind: "turn", sid: B, inputsAt: Date.now() + 5000, at: Date.now() + 6000 }]);
    await settle();
    expect(receipts.read([`${INSTANCE}/4`], undefined)[0]).toMatchObject({ state: "delivered" });
    expect(inbox.peekHeld(B, Date.now(), 1e9)).toEqual([]);
    receipts.dispose();
  });

  it("judges a message unseen after its idle session's wait, offers it again, then tells its person", async () => {
    // Only the sweep's clock is moved: the store's writes go on as they do.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    try {
      const { inbox, receipts, told, tell, settle } = rig();
      await inbox.recordDelivered(B, 5, message(5));
      await settle();
      tell([{ kind: "state", sid: B, idle: true, at: Date.now() }]);
      vi.advanceTimersByTime(UNSEEN_AFTER_MS - 1000);
      await settle();
      expect(receipts.read([`${INSTANCE}/5`], undefined)[0]).toMatchObject({ state: "delivered" });
      vi.advanceTimersByTime(2000);
      await settle();
      expect(receipts.read([`${INSTANCE}/5`], undefined)[0]).toMatchObject({ state: "unseen" });
      expect(told).toEqual([]);
      vi.advanceTimersByTime(UNSEEN_AFTER_MS + 1000);
      await settle();
      expect(told).toEqual([
        expect.stringContaining(`message ${INSTANCE}/5 to ${B} was not seen by its model`),
      ]);
      receipts.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it("publishes the receipts of one turn's deliveries in one frame", async () => {
    const { inbox, hub, receipts, settle } = rig();
    const published: unknown[] = [];
    vi.spyOn(hub, "count").mockReturnValue(1);
    vi.spyOn(hub, "publish").mockImplementation((topic, data) => {
      if (topic === "receipts") published.push(data);
      return 1;
    });
    await Promise.all([6, 7, 8].map((c) => inbox.recordDelivered(B, c, message(c))));
    await settle();
    expect(published).toEqual([
      {
        receipts: [6, 7, 8].map((c) =>
          expect.objectContaining({ mid: `${INSTANCE}/${c}`, state: "delivered" }),
        ),
      },
    ]);
    receipts.dispose();
  });
});
