import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Connection, type InboundHandler } from "../../src/instance/wire/connection.js";
import { FAIR_SHARE } from "../../src/instance/wire/inbound.js";
import { BACKPRESSURE } from "../../src/instance/wire/outbound.js";
import { listenUnix } from "../../src/instance/wire/uds.js";

// Issue 23, item 2: one connection's backlog must not be served before
// another connection's next frame. Real Unix sockets into the real transport
// and connection; the handler records the order frames are handed on in.

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

async function listening(handler: InboundHandler): Promise<{ path: string; server: Server }> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-fair-"));
  const path = join(dir, "s.sock");
  const server = await listenUnix(path, (t) => new Connection(t, handler));
  cleanup.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, server };
}

async function dial(path: string, server: Server): Promise<Socket> {
  const accepted = new Promise((resolve) => server.once("connection", resolve));
  const socket = connect(path);
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  await accepted;
  cleanup.push(() => socket.destroy());
  return socket;
}

describe("reading shared among connections", () => {
  it.each([
    ["requests", (i: number) => JSON.stringify({ op: "instance_ping", request_id: `a${i}` })],
    ["lines that are not JSON", (i: number) => `not json ${i} {{{{{{{{{{{{{{{{{{{{{{{{{{{{`],
  ])(
    "serves another client's frame before a pipelining client's backlog of %s",
    async (_, line) => {
      const backlog = 5000;
      const seen: string[] = [];
      let all: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        all = resolve;
      });
      const { path, server } = await listening({
        frame: (_conn, l) => {
          seen.push(l);
          if (seen.length === backlog + 1) all();
        },
        oversized: () => {},
      });
      const flooder = await dial(path, server);
      const other = await dial(path, server);
      // Both are written before the instance reads either: the backlog first.
      flooder.write(Array.from({ length: backlog }, (_, i) => `${line(i)}\n`).join(""));
      other.write("the other client's frame\n");
      await done;
      const at = seen.indexOf("the other client's frame");
      // Within the first slices, not after the 5,000 (nor the first 64 KiB of them).
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThan(100);
      // The backlog itself is served whole and in order.
      expect(seen.filter((l) => l !== "the other client's frame")).toEqual(
        Array.from({ length: backlog }, (_, i) => line(i)),
      );
    },
  );

  it("serves a pipelining client alone in its round 32 frames a turn, not 8", async () => {
    // Issue 26, item 3: a lone pipelining sender's frames ran 8 to a turn,
    // and each turn paid a commit and a write per peer of its own.
    const backlog = 2000;
    const groups: number[] = [0];
    let all: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      all = resolve;
    });
    let seen = 0;
    const { path, server } = await listening({
      frame: () => {
        groups[groups.length - 1]!++;
        if (++seen === backlog) all();
      },
      oversized: () => {},
    });
    // A turn of the event loop ends where this ticker runs again.
    let ticking = true;
    const tick = () => {
      if (groups.at(-1) !== 0) groups.push(0);
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const flooder = await dial(path, server);
    flooder.write("x\n".repeat(backlog));
    await done;
    ticking = false;
    expect(Math.max(...groups)).toBe(FAIR_SHARE.aloneSliceFrames);
    expect(FAIR_SHARE.aloneSliceFrames).toBeGreaterThan(FAIR_SHARE.sliceFrames);
  });

  it("runs not one request past a client's in-flight bound, even of those already read", async () => {
    // docs/11-the-wire-and-the-contract.md: at most 1,024 requests running at once. It held only for
    // frames read after the pause; the rest of a chunk ran regardless.
    const bound = BACKPRESSURE.maxRequestsInFlight;
    const sent = bound + 100;
    let running = 0;
    let conn: Connection | undefined;
    const at = new Map<number | "marker", () => void>();
    const reached = (n: number | "marker") => new Promise<void>((r) => at.set(n, r));
    const { path, server } = await listening({
      frame: (c, l) => {
        if (l === "marker") return at.get("marker")?.();
        c.requestStarted(); // runs until the test settles it
        conn = c;
        at.get(++running)?.();
      },
      oversized: () => {},
    });
    const client = await dial(path, server);
    const other = await dial(path, server);
    const paused = reached(bound + 1);
    client.write("r\n".repeat(sent));
    await paused;
    // Another client's frame served after the pause: the backlog had its
    // chance to run meanwhile, and did not.
    const marker = reached("marker");
    other.write("marker\n");
    await marker;
    expect(running).toBe(bound + 1);
    // Half of them answered: the rest run.
    const all = reached(sent);
    for (let i = 0; i <= bound / 2; i++) conn!.requestSettled();
    await all;
    expect(running).toBe(sent);
  });
});
