import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RATE_BURST } from "../../src/instance/auth/auth-routes.js";
import { ownerHeaders } from "../helpers/http.js";
import { isolatedHome, runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { rawRequest } from "../helpers/raw-http.js";

// Issue 14, exposure: beyond loopback the owner's credential does not count,
// a request without a person's token gets only the sign-in page, the source
// allowlist answers 403 first, X-Forwarded-For is believed only from a
// trusted proxy (read from the right), and binding beyond loopback needs a
// passkey. The instance runs on loopback; "outside" is a client address
// recovered through a trusted proxy's X-Forwarded-For.

function homeWithConfig(http: Record<string, unknown>) {
  const { env } = isolatedHome();
  mkdirSync(join(env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true, mode: 0o700 });
  writeFileSync(join(env.XDG_CONFIG_HOME!, "ccmsg", "config.json"), JSON.stringify({ http }));
  return env;
}

const OUTSIDE = "203.0.113.5";

function upgrade(inst: TestInstance, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${inst.http.replace("http", "ws")}ws`, { headers });
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("error", () => resolve(0));
  });
}

describe("behind a trusted proxy", () => {
  let inst: TestInstance;
  const cli = (args: string[]) => runCli(args, { ...inst.env, CCMSG_STATE_DIR: inst.stateDir });
  beforeAll(async () => {
    inst = await startInstance({ env: homeWithConfig({ trusted_proxies: ["127.0.0.1"] }) });
  }, 30_000);
  afterAll(async () => {
    await inst?.stop();
  });

  it("refuses the owner's credential from outside, and believes only the proxy's own hop", async () => {
    const owner = ownerHeaders(inst.http);
    expect((await rawRequest(inst.http, "GET", "/api/health", owner)).status).toBe(200);
    const outside = await rawRequest(inst.http, "GET", "/api/health", {
      ...owner,
      "x-forwarded-for": OUTSIDE,
    });
    expect(outside.status).toBe(401);
    expect(outside.json).toMatchObject({ ok: false, code: "auth_invalid" });
    // A client that writes "127.0.0.1" itself sits left of what the proxy
    // appended: the rightmost untrusted hop is the client.
    const spoofed = await rawRequest(inst.http, "GET", "/api/health", {
      ...owner,
      "x-forwarded-for": `127.0.0.1, ${OUTSIDE}`,
    });
    expect(spoofed.status).toBe(401);
    expect(await upgrade(inst, { ...owner, "x-forwarded-for": OUTSIDE })).toBe(401);
    expect(await upgrade(inst, owner)).toBe(101);
    // The one-time owner link is for this machine only.
    const login = await rawRequest(inst.http, "GET", "/owner/login?token=x", {
      "x-forwarded-for": OUTSIDE,
    });
    expect(login.status).toBe(401);
  });

  it("gives a request without a token nothing but the sign-in page (page, its files; not the API or the WebSocket)", async () => {
    const added = await cli(["passkey", "add", "--json"]);
    expect(added.code, added.stderr).toBe(0);
    const { url, code } = JSON.parse(added.stdout) as { url: string; code: string };
    expect(url).toMatch(/#register=/);
    expect(code).toMatch(/^[0-9]{6}$/);
    const from = { "x-forwarded-for": OUTSIDE };
    const page = await rawRequest(inst.http, "GET", "/", { ...from, accept: "text/html" });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="app">');
    const asset = /assets\/[A-Za-z0-9_.-]+\.js/.exec(page.text)?.[0];
    expect(asset).toBeDefined();
    expect((await rawRequest(inst.http, "GET", `/${asset}`, from)).status).toBe(200);
    for (const path of ["/api/health", "/api/snapshot", "/api/status", "/api/console/held"]) {
      const r = await rawRequest(inst.http, "GET", path, from);
      expect(r.status, path).toBe(401);
      expect(r.json, path).toMatchObject({ ok: false, code: "auth_invalid" });
    }
    expect(await upgrade(inst, from)).toBe(401);
    expect(await upgrade(inst, { ...from, "sec-websocket-protocol": "ccmsg.token.forged" })).toBe(
      401,
    );
    // The auth routes answer: a challenge names this instance as issuer.
    const challenge = await rawRequest(inst.http, "POST", "/auth/challenge", from, {});
    expect(challenge.json).toMatchObject({ ok: true, issuer: inst.id });
  });

  it("judges the registration code at the issuer: wrong codes burn the URL, an old URL has expired", async () => {
    const headers = {
      origin: `http://localhost:${new URL(inst.http).port}`,
      "sec-fetch-site": "same-origin",
    };
    const attempt = async (token: string, code: string) => {
      const c = (await rawRequest(inst.http, "POST", "/auth/challenge", {}, {})).json;
      const { ok: _ok, request_id: _r, ...challenge } = c;
      return rawRequest(inst.http, "POST", "/auth/register", headers, {
        token,
        code,
        challenge,
        credential: { id: "AA", raw_id: "AA", client_data_json: "AA", attestation_object: "AA" },
      });
    };
    const mint = async () => {
      const r = JSON.parse((await cli(["passkey", "add", "--json"])).stdout) as {
        url: string;
        code: string;
      };
      return { token: r.url.split("#register=")[1]!, code: r.code };
    };
    const a = await mint();
    const wrong = a.code === "123456" ? "654321" : "123456";
    for (let i = 0; i < 5; i++)
      expect((await attempt(a.token, wrong)).json).toMatchObject({
        error: { code: "auth_invalid" },
      });
    // Burnt: the right code no longer helps.
    expect((await attempt(a.token, a.code)).json).toMatchObject({
      error: { code: "auth_invalid" },
    });
    // Without the Origin of the web UI, or typed in (Sec-Fetch-Site: none).
    const b = await mint();
    const c = (await rawRequest(inst.http, "POST", "/auth/challenge", {}, {})).json;
    const bare = await rawRequest(
      inst.http,
      "POST",
      "/auth/register",
      {},
      { token: b.token, code: b.code, challenge: c },
    );
    expect(bare.status).toBe(403);
    expect(bare.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    await inst.advanceClock(11 * 60_000);
    expect((await attempt(b.token, b.code)).json).toMatchObject({
      error: { code: "auth_expired" },
    });
    // A malformed body is invalid_args with the schema's words.
    const bad = await rawRequest(inst.http, "POST", "/auth/register", headers, {
      token: b.token,
      code: "12",
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ ok: false, error: { code: "invalid_args" } });
  });

  it("lists nothing before a registration completes, and refuses to remove an unknown person", async () => {
    const list = await cli(["passkey", "list", "--json"]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ passkeys: [] });
    const remove = await cli(["passkey", "remove", "nobody-1", "--json"]);
    expect(remove.code).not.toBe(0);
    expect(remove.stderr).toContain("not_found");
    // Read by a person: the URL and, apart from it, the code.
    const text = await cli(["passkey", "add", "--text"]);
    expect(text.code, text.stderr).toBe(0);
    const url = /https?:\/\/\S+#register=\S+/.exec(text.stdout)?.[0];
    const code = /code there: (\d{6})/.exec(text.stdout)?.[1];
    expect(url).toBeDefined();
    expect(code).toBeDefined();
    expect(url).not.toContain(code);
    // The contract's spelling reaches the same command.
    const spelled = await cli(["daemon", "passkey", "add", "myunit", "--name", "tablet", "--json"]);
    expect(spelled.code, spelled.stderr).toBe(0);
    expect(JSON.parse(spelled.stdout)).toMatchObject({ code: expect.stringMatching(/^\d{6}$/) });
  });

  it("shares one rate limit across the four auth routes", async () => {
    const from = { "x-forwarded-for": "198.51.100.9" };
    let limited: Awaited<ReturnType<typeof rawRequest>> | undefined;
    for (let i = 0; i < RATE_BURST + 2 && limited === undefined; i++) {
      const path = ["/auth/challenge", "/auth/refresh", "/auth/assert"][i % 3]!;
      const r = await rawRequest(inst.http, "POST", path, from, {});
      if (r.status === 429) limited = r;
    }
    expect(limited?.headers["retry-after"]).toBeDefined();
    expect(limited?.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    // Another client is not held up.
    expect((await rawRequest(inst.http, "POST", "/auth/challenge", {}, {})).status).toBe(200);
  });
});

describe("the source allowlist", () => {
  let inst: TestInstance;
  beforeAll(async () => {
    inst = await startInstance({
      env: homeWithConfig({
        trusted_proxies: ["127.0.0.1"],
        source_ips: ["127.0.0.0/8", "192.0.2.0/24"],
      }),
    });
  }, 30_000);
  afterAll(async () => {
    await inst?.stop();
  });

  it("answers 403 to any other address before anything else, credential or not", async () => {
    const owner = ownerHeaders(inst.http);
    const out = { ...owner, "x-forwarded-for": "198.51.100.7" };
    for (const [method, path] of [
      ["GET", "/"],
      ["GET", "/api/health"],
      ["POST", "/auth/challenge"],
      ["GET", "/owner/login"],
    ] as const)
      expect(
        (await rawRequest(inst.http, method, path, out, method === "POST" ? {} : undefined)).status,
        path,
      ).toBe(403);
    expect(await upgrade(inst, out)).toBe(403);
    // Listed: through to authentication as usual.
    expect(
      (
        await rawRequest(
          inst.http,
          "POST",
          "/auth/challenge",
          { "x-forwarded-for": "192.0.2.44" },
          {},
        )
      ).status,
    ).toBe(200);
    expect((await rawRequest(inst.http, "GET", "/api/health", owner)).status).toBe(200);
  });
});

describe("binding beyond loopback", () => {
  it("refuses to start without a passkey, and says how to add one", async () => {
    const { env } = isolatedHome();
    const r = await runCli(["daemon", "run", "--http", "0.0.0.0:0"], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("ccmsg passkey add");
  }, 30_000);
});
