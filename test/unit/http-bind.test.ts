import type { Server } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { bindHttp, type HttpHandlers } from "../../src/instance/http/bind.js";

/** Handlers that answer `hello <n>` and count how often they were built. */
function handlers(n: number, closed: () => void = () => {}): HttpHandlers {
  return {
    request: (_req, res) => res.end(`hello ${n}`),
    upgrade: (_req, socket) => socket.end("HTTP/1.1 101 Switching Protocols\r\n\r\nupgraded"),
    close: async () => closed(),
  };
}

/** A raw upgrade request; resolves with everything the server wrote. */
function upgradeRequest(address: string): Promise<string> {
  const [host, port] = [address.slice(0, address.lastIndexOf(":")), address.split(":").pop()!];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), host, () =>
      socket.write(
        "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
      ),
    );
    let got = "";
    socket.on("data", (c) => {
      got += c.toString();
    });
    socket.on("end", () => resolve(got));
    socket.on("error", reject);
  });
}

describe("an HTTP listener whose stack loads on first use", () => {
  it("is bound before anything loads; requests and an upgrade that arrive together wait for one load", async () => {
    let loads = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const bound = await bindHttp("127.0.0.1", 0, async (_server: Server, port: number) => {
      loads++;
      expect(port).toBeGreaterThan(0);
      await gate;
      return handlers(loads);
    });
    expect(loads).toBe(0);
    const url = `http://${bound.address}/`;
    const answers = Promise.all([
      fetch(url).then((r) => r.text()),
      fetch(url).then((r) => r.text()),
      upgradeRequest(bound.address),
    ]);
    release();
    const [a, b, up] = await answers;
    expect([a, b]).toEqual(["hello 1", "hello 1"]);
    expect(up).toContain("upgraded");
    expect(await (await fetch(url)).text()).toBe("hello 1");
    expect(loads).toBe(1);
    await bound.close();
  });

  it("a load that fails answers 500, and the next request loads again", async () => {
    let loads = 0;
    const bound = await bindHttp("127.0.0.1", 0, async () => {
      loads++;
      if (loads === 1) throw new Error("cannot load");
      return handlers(loads);
    });
    const url = `http://${bound.address}/`;
    expect((await fetch(url)).status).toBe(500);
    expect(await (await fetch(url)).text()).toBe("hello 2");
    await bound.close();
  });

  it("closes whether or not its stack was loaded, closing the stack too", async () => {
    const idle = await bindHttp("127.0.0.1", 0, async () => handlers(1));
    await idle.close();
    await expect(fetch(`http://${idle.address}/`)).rejects.toThrow();
    let closed = 0;
    const used = await bindHttp("127.0.0.1", 0, async () => handlers(1, () => closed++));
    await (await fetch(`http://${used.address}/`)).text();
    await used.close();
    expect(closed).toBe(1);
  });
});
