import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { MAX_FRAME_BYTES } from "../../src/contract/index.js";
import { ownerHeaders } from "../helpers/http.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";

// Issue 8, item 14: how WebSocket messages carry frames. A message carries
// whole frames — one, or several separated by newlines — and its end ends its
// last frame; a frame never spans two messages. A frame over MAX_FRAME_BYTES
// is answered bad_request whatever the size of the message, and the
// connection stays.

let inst: TestInstance;
beforeAll(async () => {
  inst = await startInstance();
});
afterAll(async () => {
  await inst.stop();
});

/** A raw WebSocket that keeps every line the instance sent. */
class RawWs {
  readonly lines: Record<string, unknown>[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  closeCode: number | undefined;
  readonly closed: Promise<number>;

  constructor(readonly ws: WebSocket) {
    ws.on("message", (data: Buffer) => {
      for (const line of data.toString("utf8").split("\n")) {
        if (line !== "") this.lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      this.waiters = this.waiters.filter((w) => {
        if (this.lines.length < w.n) return true;
        w.resolve();
        return false;
      });
    });
    this.closed = new Promise((resolve) =>
      ws.on("close", (code) => {
        this.closeCode = code;
        resolve(code);
      }),
    );
  }

  static open(url: string): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: ownerHeaders(url) });
      const raw = new RawWs(ws);
      ws.once("open", () => resolve(raw));
      ws.once("error", reject);
    });
  }

  /** Resolves once `n` lines have arrived in all. */
  lineCount(n: number): Promise<void> {
    if (this.lines.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** Send a ping request and resolve with every line up to its reply. */
  async ping(id: string): Promise<Record<string, unknown>[]> {
    this.ws.send(`{"op":"instance_ping","request_id":"${id}"}\n`);
    for (;;) {
      const hit = this.lines.find((l) => l.request_id === id);
      if (hit !== undefined) return this.lines;
      const closed = this.closed.then((code) => {
        throw new Error(`the instance closed the WebSocket (${code})`);
      });
      await Promise.race([this.lineCount(this.lines.length + 1), closed]);
    }
  }
}

const oversized = {
  ok: false,
  error: { code: "bad_request", msg: expect.stringContaining("MAX_FRAME_BYTES") },
};
const unparseable = {
  ok: false,
  error: { code: "bad_request", msg: expect.stringContaining("JSON") },
};

let conn: RawWs;
beforeEach(async () => {
  conn = await RawWs.open(`${inst.http}ws`);
});
afterEach(() => {
  conn.ws.terminate();
});

describe("one WebSocket message", () => {
  it("over 4 MiB is answered bad_request once, and the connection stays", async () => {
    conn.ws.send("x".repeat(5 * 1024 * 1024));
    const lines = await conn.ping("after-5mib");
    expect(lines[0]).toEqual(oversized);
    expect(lines).toHaveLength(2);
    expect(conn.closeCode).toBeUndefined();
  });

  it("of 64 MiB, sent in fragments, is answered bad_request once; the connection stays", async () => {
    const part = Buffer.alloc(8 * 1024 * 1024, "y");
    for (let i = 0; i < 7; i++) conn.ws.send(part, { binary: false, fin: false });
    conn.ws.send(part, { binary: false, fin: true });
    const lines = await conn.ping("after-64mib");
    expect(lines[0]).toEqual(oversized);
    expect(lines).toHaveLength(2);
    expect(conn.closeCode).toBeUndefined();
  });

  it("carrying a frame of exactly MAX_FRAME_BYTES (plus its newline) is answered", async () => {
    const head = `{"op":"instance_ping","request_id":"full","pad":"`;
    const tail = `"}`;
    conn.ws.send(`${head}${"p".repeat(MAX_FRAME_BYTES - head.length - tail.length)}${tail}\n`);
    await conn.lineCount(1);
    expect(conn.lines[0]).toMatchObject({ request_id: "full" });
    // ...and one byte more is not.
    conn.ws.send(`${head}${"p".repeat(MAX_FRAME_BYTES + 1 - head.length - tail.length)}${tail}`);
    const lines = await conn.ping("after-full");
    expect(lines.slice(1)).toEqual([
      oversized,
      expect.objectContaining({ request_id: "after-full" }),
    ]);
  });

  it("sent in fragments with a ping between them is one frame", async () => {
    conn.ws.send(`{"op":"instance_ping",`, { fin: false });
    const pong = new Promise<void>((resolve) => conn.ws.once("pong", () => resolve()));
    conn.ws.ping();
    conn.ws.send(`"request_id":"fragmented"}`, { fin: true });
    await pong;
    await conn.lineCount(1);
    expect(conn.lines).toEqual([expect.objectContaining({ request_id: "fragmented" })]);
  });

  it("carrying two frames separated by a newline is two requests", async () => {
    conn.ws.send(
      `{"op":"instance_ping","request_id":"one"}\n{"op":"instance_ping","request_id":"two"}`,
    );
    await conn.lineCount(2);
    expect(conn.lines.map((l) => l.request_id).sort()).toEqual(["one", "two"]);
  });

  it("ends its last frame: a frame split across two messages is two bad frames", async () => {
    conn.ws.send(`{"op":"instance_ping",`);
    conn.ws.send(`"request_id":"split"}`);
    const lines = await conn.ping("after-split");
    expect(lines.slice(0, 2)).toEqual([unparseable, unparseable]);
    expect(lines).toHaveLength(3);
  });

  it("an oversized frame among good ones costs only itself", async () => {
    const big = "z".repeat(MAX_FRAME_BYTES + 10);
    conn.ws.send(
      `{"op":"instance_ping","request_id":"before"}\n${big}\n{"op":"instance_ping","request_id":"behind"}\n`,
    );
    await conn.lineCount(3);
    // Replies may complete in any order; the refusal has no request_id.
    expect(conn.lines).toHaveLength(3);
    expect(conn.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ request_id: "before" }),
        oversized,
        expect.objectContaining({ request_id: "behind" }),
      ]),
    );
  });
});

describe("the WebSocket itself", () => {
  it("closes cleanly when the client closes", async () => {
    expect((await conn.ping("last")).at(-1)).toMatchObject({ ok: true, request_id: "last" });
    conn.ws.close(1000);
    expect(await conn.closed).toBe(1000);
  });
});

describe("a client that breaks RFC 6455", () => {
  it("an unmasked frame closes the connection with 1002 (protocol error)", async () => {
    const url = new URL(inst.http);
    const socket = connect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    const bodyOf = (bytes: Buffer) => bytes.subarray(bytes.indexOf("\r\n\r\n") + 4);
    const closeFrame = new Promise<void>((resolve) =>
      socket.on("data", (b: Buffer) => {
        received.push(b);
        const bytes = Buffer.concat(received);
        if (bytes.includes("\r\n\r\n") && bodyOf(bytes).length >= 4) resolve();
      }),
    );
    socket.write(
      [
        "GET /ws HTTP/1.1",
        `Host: ${url.host}`,
        `Authorization: ${ownerHeaders(inst.http).authorization}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "",
        "",
      ].join("\r\n"),
    );
    // An unmasked text frame carrying "{}": clients must mask (§5.1).
    socket.write(Buffer.from([0x81, 0x02, 0x7b, 0x7d]));
    await closeFrame;
    socket.destroy();
    const bytes = Buffer.concat(received);
    const body = bodyOf(bytes);
    expect(bytes.toString("latin1")).toMatch(/^HTTP\/1.1 101/);
    // The server's close frame: FIN + close opcode, then the code.
    expect(body[0]).toBe(0x88);
    expect(body.readUInt16BE(2)).toBe(1002);
  });
});
