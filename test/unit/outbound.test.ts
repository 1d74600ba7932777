import { describe, expect, it } from "vitest";
import { BACKPRESSURE, Outbound } from "../../src/instance/wire/outbound.js";
import { memoryTransport } from "../helpers/memory-transport.js";

function outbound() {
  const transport = memoryTransport();
  return { out: new Outbound(transport.writer, transport.reader), transport };
}

const FULL = BACKPRESSURE.highWaterBytes + 1;

describe("a connection's one outbound queue", () => {
  it("writes at once while the peer keeps up", () => {
    const { out, transport } = outbound();
    out.ordered("a");
    out.reply("b");
    expect(transport.lines).toEqual(["a", "b"]);
    expect(out.waiting()).toBe(0);
  });

  it("keeps a reply behind the topic frames written before it when the peer falls behind", () => {
    const { out, transport } = outbound();
    transport.setBacklog(FULL);
    out.ordered("frame-1");
    out.reply("reply-1");
    out.ordered("frame-2");
    expect(transport.lines).toEqual([]);
    transport.drain();
    expect(transport.lines).toEqual(["frame-1", "reply-1", "frame-2"]);
  });

  it("refuses ordered frames past the bound, but never a snapshot or a reply", () => {
    const { out, transport } = outbound();
    transport.setBacklog(FULL);
    for (let i = 0; i < BACKPRESSURE.maxWaitingOrdered; i++)
      expect(out.ordered(`f${i}`)).toBe(true);
    expect(out.ordered("one too many")).toBe(false);
    expect(out.ordered("snapshot", true)).toBe(true);
    out.reply("reply");
    transport.drain();
    expect(transport.lines).toHaveLength(BACKPRESSURE.maxWaitingOrdered + 2);
    expect(transport.lines.at(-1)).toBe("reply");
    expect(transport.lines).not.toContain("one too many");
  });

  it("stops reading a peer whose replies pile up, and reads again once they drained", () => {
    const { out, transport } = outbound();
    transport.setBacklog(FULL);
    const reply = "r".repeat(64 * 1024);
    const count = Math.ceil(BACKPRESSURE.pauseReadingBytes / reply.length) + 1;
    for (let i = 0; i < count; i++) out.reply(reply);
    expect(transport.paused).toBe(true);
    transport.drain();
    expect(transport.paused).toBe(false);
    expect(transport.lines).toHaveLength(count);
  });

  it("replaces a waiting value with a newer one in its place", () => {
    const { out, transport } = outbound();
    transport.setBacklog(FULL);
    out.value("peers", "v1", true);
    out.ordered("after");
    out.value("peers", "v2", true);
    transport.drain();
    expect(transport.lines).toEqual(["v2", "after"]);
  });

  it("hands everything waiting to the transport when the connection ends", () => {
    const { out, transport } = outbound();
    transport.setBacklog(FULL);
    out.ordered("a");
    out.reply("restarting");
    out.flush();
    expect(transport.lines).toEqual(["a", "restarting"]);
  });
});
