import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineFramer } from "../../src/net/line-framer.js";

function framer(maxBytes = 64) {
  const out: string[] = [];
  const f = new LineFramer(
    maxBytes,
    (line) => out.push(line),
    () => out.push("<oversized>"),
  );
  return { f, out };
}

describe("LineFramer", () => {
  it("gives the same frames however the stream is cut into chunks", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 20 }), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l.replaceAll("\n", " ")}\n`).join(""));
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const { f, out } = framer(1024);
          let from = 0;
          for (const to of [...at, bytes.length]) {
            f.push(bytes.subarray(from, to));
            from = to;
          }
          const want = lines.map((l) => l.replaceAll("\n", " ")).filter((l) => l.trim() !== "");
          expect(out).toEqual(want);
        },
      ),
    );
  });

  it("reports a frame over the ceiling once, skips it to its newline, and goes on", () => {
    const { f, out } = framer(8);
    f.push(Buffer.from("short\n0123456"));
    f.push(Buffer.from("789abcdef"));
    f.push(Buffer.from("more\nnext\n"));
    expect(out).toEqual(["short", "<oversized>", "next"]);
  });

  it("keeps no part of the chunks a frame arrived in", () => {
    // A frame still incomplete is copied out of the socket's buffer: holding
    // a piece of it would keep the whole read buffer alive (issue 23, item
    // 10). Reusing the buffer proves it: the frame must not change.
    const { f, out } = framer(1 << 20);
    const chunk = Buffer.from('{"op":"instance_ping","req');
    f.push(chunk);
    chunk.fill("x");
    f.push(Buffer.from('uest_id":"1"}\n'));
    expect(out).toEqual(['{"op":"instance_ping","request_id":"1"}']);
  });

  it("reads a frame of any size that grows across many chunks", () => {
    const { f, out } = framer(1 << 20);
    const frame = "y".repeat(300_000);
    for (let i = 0; i < frame.length; i += 4096) f.push(Buffer.from(frame.slice(i, i + 4096)));
    f.push(Buffer.from("\nafter\n"));
    expect(out).toEqual([frame, "after"]);
  });

  it("reads a little at a time when asked, and says where it stopped", () => {
    const { f, out } = framer();
    const chunk = Buffer.from("a\n\nb\nc\nd");
    const first = f.push(chunk, 0, 2);
    expect(out).toEqual(["a", "b"]);
    expect(f.push(chunk, first, 5)).toBe(chunk.length);
    f.push(Buffer.from("e\n"));
    expect(out).toEqual(["a", "b", "c", "de"]);
  });
});
