import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../src/client/client.js";
import { ownerHeaders } from "../helpers/http.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";

// Issue 8, exposure: a web page the person visits, or a DNS-rebinding name
// pointing at loopback, must not read or change anything.

let inst: TestInstance;
let port: string;
beforeAll(async () => {
  inst = await startInstance();
  port = new URL(inst.http).port;
});
afterAll(async () => {
  await inst.stop();
});

/** A raw HTTP request with exactly these headers and the owner's credential
 * (fetch cannot set Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path.replace(/^\//, ""), inst.http),
      { method, headers: { ...ownerHeaders(inst.http), ...headers } },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function itemCount(): Promise<number> {
  const r = await raw("GET", "/api/snapshot", {});
  return (JSON.parse(r.body) as { workItems: { items: unknown[] } }).workItems.items.length;
}

const ITEM = JSON.stringify({ title: "from a web page" });

describe("the HTTP listener", () => {
  it("refuses a board mutation from a foreign Origin, and writes nothing", async () => {
    const before = await itemCount();
    const r = await raw(
      "POST",
      "/api/work-items",
      { origin: "http://evil.example", "content-type": "application/json" },
      ITEM,
    );
    expect(r.status).toBe(403);
    expect(await itemCount()).toBe(before);
  });

  it("refuses a text/plain or form body, which a page can post without a preflight", async () => {
    const before = await itemCount();
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const r = await raw("POST", "/api/work-items", { "content-type": type }, ITEM);
      expect(r.status, type).toBe(415);
    }
    expect(await itemCount()).toBe(before);
  });

  it("refuses a Host that is not this instance (DNS rebinding) on reads too", async () => {
    const r = await raw("GET", "/api/snapshot", { host: `evil.example:${port}` });
    expect(r.status).toBe(403);
    expect(r.body).not.toContain("workItems");
  });

  it("serves its own origin under any loopback name", async () => {
    for (const name of ["127.0.0.1", "localhost"]) {
      const r = await raw("GET", "/api/snapshot", {
        host: `${name}:${port}`,
        origin: `http://${name}:${port}`,
      });
      expect(r.status, name).toBe(200);
    }
    const created = await raw(
      "POST",
      "/api/work-items",
      { origin: `http://localhost:${port}`, "content-type": "application/json" },
      ITEM,
    );
    expect(created.status).toBe(200);
  });

  it("refuses a WebSocket upgrade from a foreign Origin or Host, and accepts its own", async () => {
    const url = `${inst.http.replace("http:", "ws:")}ws`;
    const owner = ownerHeaders(url);
    await expect(
      Client.connectWebSocket(url, { ...owner, origin: "http://evil.example" }),
    ).rejects.toThrow(/403/);
    await expect(
      Client.connectWebSocket(url, { ...owner, host: `evil.example:${port}` }),
    ).rejects.toThrow(/403/);
    const own = await Client.connectWebSocket(url, {
      ...owner,
      origin: `http://localhost:${port}`,
    });
    own.close();
  });
});
