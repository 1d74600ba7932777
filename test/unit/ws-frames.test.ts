import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { WsFrameReader } from "../../src/instance/wire/ws-frames.js";

// The streaming reader of client WebSocket frames (issue 8, item 14).

/** One client frame as RFC 6455 §5.2 lays it out. */
function frame(
  opcode: number,
  payload: Buffer | string,
  { fin = true, masked = true, rsv = 0 }: { fin?: boolean; masked?: boolean; rsv?: number } = {},
): Buffer {
  const body = Buffer.from(payload);
  const len = body.length;
  const ext = len < 126 ? 0 : len < 65_536 ? 2 : 8;
  const head = Buffer.alloc(2 + ext);
  head[0] = (fin ? 0x80 : 0) | (rsv << 4) | opcode;
  head[1] = (masked ? 0x80 : 0) | (ext === 0 ? len : ext === 2 ? 126 : 127);
  if (ext === 2) head.writeUInt16BE(len, 2);
  if (ext === 8) head.writeBigUInt64BE(BigInt(len), 2);
  if (!masked) return Buffer.concat([head, body]);
  const mask = randomBytes(4);
  const out = Buffer.from(body);
  for (let i = 0; i < out.length; i++) out[i]! ^= mask[i & 3]!;
  return Buffer.concat([head, mask, out]);
}

/** Feed `bytes` in pieces of `step` and record what the reader reports. */
function read(bytes: Buffer, step = bytes.length) {
  const events: (string | Buffer)[] = [];
  let data: Buffer[] = [];
  const control: Buffer[] = [];
  const reader = new WsFrameReader({
    data: (b) => data.push(Buffer.from(b)),
    messageEnd: () => {
      events.push(Buffer.concat(data));
      data = [];
    },
    control: (b) => control.push(Buffer.from(b)),
    violation: (reason) => events.push(`violation: ${reason}`),
  });
  for (let at = 0; at < bytes.length; at += step) reader.push(bytes.subarray(at, at + step));
  return { events, control: Buffer.concat(control) };
}

const TEXT = 0x1;
const BINARY = 0x2;
const CONT = 0x0;
const PING = 0x9;

describe("WsFrameReader", () => {
  const big = "b".repeat(70_000);
  const ping = frame(PING, "hi");
  const stream = Buffer.concat([
    frame(TEXT, "small"),
    frame(TEXT, "m".repeat(300)),
    frame(BINARY, big),
    frame(TEXT, "first,", { fin: false }),
    ping,
    frame(CONT, "second,", { fin: false }),
    frame(CONT, "last"),
    frame(TEXT, ""),
  ]);
  const expected = ["small", "m".repeat(300), big, "first,second,last", ""];

  for (const step of [stream.length, 4096, 7, 1]) {
    it(`unmasks every message and passes control frames on whole, read ${step} bytes at a time`, () => {
      // The reader unmasks in place, as it may with a socket's own chunks.
      const { events, control } = read(Buffer.from(stream), step);
      expect(events.map((e) => e.toString())).toEqual(expected);
      expect(control.equals(ping)).toBe(true);
    });
  }

  it.each([
    ["an unmasked frame", frame(TEXT, "x", { masked: false }), "not masked"],
    ["a set RSV bit", frame(TEXT, "x", { rsv: 4 }), "RSV"],
    ["an unknown opcode", frame(0x3, "x"), "opcode"],
    ["a continuation with no message", frame(CONT, "x"), "continuation"],
    [
      "a new message inside a fragmented one",
      Buffer.concat([frame(TEXT, "a", { fin: false }), frame(TEXT, "b")]),
      "inside",
    ],
    ["a fragmented control frame", frame(PING, "x", { fin: false }), "control"],
    ["a control frame over 125 bytes", frame(PING, "p".repeat(126)), "control"],
  ])("stops at %s", (_name, bytes, reason) => {
    const { events } = read(Buffer.concat([bytes, frame(TEXT, "after")]));
    expect(events).toEqual([expect.stringContaining(reason)]);
  });
});
