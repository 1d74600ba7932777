import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  MAX_LINE_BYTES,
  readLines,
  type TranscriptLine,
} from "../../src/harness/transcript-lines.js";

function file(content: string | Buffer): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-lines-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  const p = join(d, "t.jsonl");
  writeFileSync(p, content);
  return p;
}

async function all(path: string, from = 0, chunkBytes?: number): Promise<TranscriptLine[]> {
  const out: TranscriptLine[] = [];
  for await (const batch of readLines(path, from, { chunkBytes })) out.push(...batch);
  return out;
}

describe("readLines", () => {
  it("yields complete lines with byte offsets, across chunk borders and multi-byte text", async () => {
    const lines = ['{"a":"é—🙂"}', "not json", '{"b":2}', "[1]"];
    const text = `${lines.join("\n")}\n{"partial":`;
    const p = file(text);
    for (const chunk of [3, 5, 7, 1 << 20]) {
      const got = await all(p, 0, chunk);
      expect(got.map((l) => l.text)).toEqual(lines);
      expect(got.map((l) => l.record)).toEqual([{ a: "é—🙂" }, undefined, { b: 2 }, undefined]);
      // Offsets are bytes, consecutive, and stop before the partial line.
      let at = 0;
      for (const l of got) {
        expect(l.offset).toBe(at);
        expect(l.bytes).toBe(Buffer.byteLength(l.text) + 1);
        at += l.bytes;
      }
      expect(at).toBe(Buffer.byteLength(text) - Buffer.byteLength('{"partial":'));
    }
  });

  it("starts at a given line offset", async () => {
    const p = file('{"a":1}\n{"b":2}\n');
    expect((await all(p, 8)).map((l) => [l.offset, l.text])).toEqual([[8, '{"b":2}']]);
  });

  it("reports an oversized line by its place, without its text", async () => {
    const big = Buffer.alloc(MAX_LINE_BYTES + 10, 0x61);
    const p = file(Buffer.concat([Buffer.from('{"a":1}\n'), big, Buffer.from('\n{"b":2}\n')]));
    const got = await all(p);
    expect(got.map((l) => [l.offset, l.bytes, l.text.length, l.oversized ?? false])).toEqual([
      [0, 8, 7, false],
      [8, big.length + 1, 0, true],
      [8 + big.length + 1, 8, 7, false],
    ]);
  });
});
