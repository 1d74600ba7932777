import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeMessagesApi } from "../helpers/fake-messages-api.js";
import type { TestInstance } from "../helpers/instance.js";
import { type GatewayProcess, llmInstance, startGatewayCli } from "../helpers/llm.js";

// The gateway spends with whatever key its callers send: only harnesses may
// call it. A web page (any Origin) or a DNS-rebound name (a foreign Host on a
// loopback gateway) is refused before anything reaches the upstream.

function post(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: "POST",
        path: "/v1/messages",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-guard", ...headers },
      },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ model: "claude-test-1", max_tokens: 10, messages: [] }));
  });
}

describe("ccmsg gateway refuses callers that are not harnesses", () => {
  let inst: TestInstance;
  let api: FakeMessagesApi;
  let gw: GatewayProcess;
  beforeAll(async () => {
    inst = await llmInstance({ sources: { local: { token: "local-token-0123456789" } } });
    api = await FakeMessagesApi.start();
    gw = await startGatewayCli(inst, api.url);
  });
  afterAll(async () => {
    await gw?.stop();
    await api?.close();
    await inst?.stop();
  });

  it("a request with an Origin (a web page) gets 403 and never reaches the upstream", async () => {
    const r = await post(gw.url, { origin: "https://evil.example" });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toMatchObject({
      type: "error",
      error: { type: "permission_error" },
    });
    expect(api.requests).toHaveLength(0);
  });

  it("a foreign Host on a loopback gateway (DNS rebinding) gets 403", async () => {
    const port = new URL(gw.url).port;
    const r = await post(gw.url, { host: `rebound.example:${port}` });
    expect(r.status).toBe(403);
    expect(api.requests).toHaveLength(0);
  });

  it("a harness's request (loopback Host, no Origin) goes through", async () => {
    const port = new URL(gw.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const r = await post(gw.url, { host });
      expect(r.status).toBe(200);
    }
    expect(api.requests).toHaveLength(2);
    expect(api.requests[0]!.headers["x-api-key"]).toBe("sk-ant-guard");
  });
});
