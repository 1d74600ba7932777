import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TranscriptItem } from "../../src/contract/transcripts.js";
import { classifyAll } from "../../src/harness/transcript-classifier.js";
import { readLines, type TranscriptLine } from "../../src/harness/transcript-lines.js";
import type { TopicHub } from "../../src/instance/topic-hub.js";
import type { FeedInfo } from "../../src/instance/transcripts/feeds.js";
import { WIRE_TEXT_MAX, wireItem } from "../../src/instance/transcripts/item-fit.js";
import { ItemIndex, RECENT_ITEMS, readSlice } from "../../src/instance/transcripts/items.js";
import { claudeTurn } from "../helpers/transcript-records.js";

// The item index as a feed consumer, fed `readLines` batches directly: what
// it re-reads must be exactly what one pass over the whole file gives, from
// any starting point, with the index keeping no items.

const tmp = mkdtempSync(join(tmpdir(), "ccmsg-index-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const SID = "6a0e3c1d-5b2f-4e8a-9c7d-1e2f3a4b5c6d";

let n = 0;
function file(lines: string[], trailing = ""): string {
  const p = join(tmp, `t${n++}.jsonl`);
  writeFileSync(p, `${lines.map((l) => `${l}\n`).join("")}${trailing}`);
  return p;
}

const info = (path: string): FeedInfo => ({ sid: SID, path, harness: "claude", home: tmp });

/** Feed `index` the file's complete lines from `from`, in small chunks. */
async function feed(index: ItemIndex, path: string, from = 0, caughtUp = false): Promise<number> {
  let end = from;
  for await (const batch of readLines(path, from, { chunkBytes: 4096 })) {
    index.lines(batch, caughtUp);
    const last = batch.at(-1)!;
    end = last.offset + last.bytes;
  }
  return end;
}

async function all(index: ItemIndex, range = {}, keeps = (_t: string) => true) {
  const out: TranscriptItem[] = [];
  for await (const batch of index.items(range, keeps)) out.push(...batch);
  return out;
}

async function lines(path: string): Promise<TranscriptLine[]> {
  const out: TranscriptLine[] = [];
  for await (const b of readLines(path)) out.push(...b);
  return out;
}

describe("ItemIndex", () => {
  it("re-reads any stretch exactly as one whole pass classifies it, across checkpoints", async () => {
    const path = file(Array.from({ length: 20 }, (_, i) => claudeTurn(i)).flat());
    const index = new ItemIndex(info(path));
    await feed(index, path);
    expect(index.records).toBeGreaterThan(3 * 256);
    const whole = classifyAll("claude", await lines(path)).items;
    expect(await all(index)).toEqual(whole);
    for (const at of [1, 255, 256, 257, 700, whole.length - 1]) {
      const item = whole[at]!;
      expect(await all(index, { sinceId: item.id })).toEqual(whole.slice(at));
      const fromRecord = whole.findIndex((i) => i.uuid === item.uuid);
      expect(await all(index, { sinceUuid: item.uuid })).toEqual(whole.slice(fromRecord));
    }
    const keeps = (t: string) => t.startsWith("tool:");
    expect(await all(index, {}, keeps)).toEqual(whole.filter((i) => keeps(i.type)));
  });

  it("takes a half-written line once it is complete, exactly once", async () => {
    const turn = claudeTurn(0);
    const last = turn.at(-1)!;
    const path = file(turn.slice(0, -1), last.slice(0, 30));
    const index = new ItemIndex(info(path));
    const end = await feed(index, path);
    const before = await all(index);
    expect(before.some((i) => (i as { text?: string }).text?.startsWith("Done with turn 0"))).toBe(
      false,
    );
    appendFileSync(path, `${last.slice(30)}\n`);
    await feed(index, path, end, true);
    const after = await all(index);
    expect(after).toEqual(classifyAll("claude", await lines(path)).items);
    expect(
      after.filter((i) => (i as { text?: string }).text?.startsWith("Done with turn 0")),
    ).toHaveLength(1);
  });

  it("publishes only once caught up, in frames that fit, and keeps the newest items for the snapshot", async () => {
    const frames: { name: string; data: { sid: string; items: TranscriptItem[] } }[] = [];
    const hub = {
      count: () => 1,
      publish: (name: string, data: { sid: string; items: TranscriptItem[] }) => {
        frames.push({ name, data });
        return 0;
      },
    } as unknown as TopicHub;
    const big = "é".repeat(200_000);
    const prompt = (uuid: string, text: string) =>
      JSON.stringify({
        type: "user",
        uuid,
        timestamp: "2026-11-30T10:00:00Z",
        message: { role: "user", content: text },
      });
    const path = file(claudeTurn(0));
    const index = new ItemIndex(info(path), hub, "0".repeat(32));
    const end = await feed(index, path);
    expect(frames).toHaveLength(0);
    const snapshot = index.snapshot();
    expect(snapshot.length).toBeLessThanOrEqual(RECENT_ITEMS);
    expect(snapshot.at(-1)).toEqual((await all(index)).at(-1));
    // A Bash call whose result comes later: the snapshot shows it linked.
    appendFileSync(
      path,
      `${Array.from({ length: 8 }, (_, i) => prompt(`big-${i}`, big)).join("\n")}\n`,
    );
    await feed(index, path, end, true);
    const items = frames.flatMap((f) => f.data.items);
    expect(items.map((i) => i.id)).toEqual(Array.from({ length: 8 }, (_, i) => `big-${i}:0`));
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames) {
      expect(f.name).toBe(`transcript_items:${SID}`);
      expect(Buffer.byteLength(JSON.stringify(f.data))).toBeLessThan(1 << 20);
    }
    // Long text is cut on the wire, whole in the file's re-read.
    expect((items[0] as { text: string }).text.length).toBeLessThan(WIRE_TEXT_MAX + 64);
    expect((await all(index, { sinceUuid: "big-0", untilUuid: "big-0" }))[0]).toMatchObject({
      text: big,
    });
  });

  it("completes a call in the snapshot when its result arrives", async () => {
    const turn = claudeTurn(0);
    const cut = turn.findIndex((l) => l.includes('"tool_use_id":"toolu_0_Bash"'));
    const path = file(turn.slice(0, cut));
    const index = new ItemIndex(info(path));
    const end = await feed(index, path);
    const call = () =>
      index
        .snapshot()
        .find((i) => i.type === "tool:Bash" && (i as { role: string }).role === "use") as
        | { result_item?: string }
        | undefined;
    expect(call()).toBeDefined();
    expect(call()!.result_item).toBeUndefined();
    appendFileSync(path, `${turn[cut]}\n`);
    await feed(index, path, end, true);
    expect(call()!.result_item).toBe(`${JSON.parse(turn[cut]!).uuid}:0`);
  });

  it("starts over on reset (a replaced file)", async () => {
    const path = file(claudeTurn(0));
    const index = new ItemIndex(info(path));
    await feed(index, path);
    writeFileSync(path, `${claudeTurn(5).join("\n")}\n`);
    index.reset();
    await feed(index, path);
    expect(await all(index)).toEqual(classifyAll("claude", await lines(path)).items);
  });

  it("answers a slice with limit, next and the ledger, within its byte budget", async () => {
    const path = file([...claudeTurn(0), ...claudeTurn(1)]);
    const index = new ItemIndex(info(path));
    await feed(index, path);
    const whole = await all(index);
    const s = await readSlice(index, {}, () => true, 10, 1 << 20);
    expect(s.items).toEqual(whole.slice(0, 10).map(wireItem));
    expect(s.next).toBe(whole[10]!.id);
    const small = await readSlice(index, {}, () => true, 500, 4096);
    expect(small.items.length).toBeGreaterThan(0);
    expect(small.items.length).toBeLessThan(whole.length);
    expect(small.next).toBe(whole[small.items.length]!.id);
    const agents = await readSlice(index, {}, (t) => t === "message:sub:in", 500, 1 << 20);
    expect(agents.ids.map((e) => [e.kind, e.id])).toEqual([
      ["agent", "a0c3e91f04d2b685"],
      ["agent", "b0c3e91f04d2b685"],
      ["agent", "a1c3e91f04d2b685"],
      ["agent", "b1c3e91f04d2b685"],
    ]);
  });
});
