import { createHash } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { ACCESS_TTL_MS } from "../../src/instance/auth/person-auth.js";
import { runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { rawRequest, refreshCookieOf } from "../helpers/raw-http.js";
import { sharedBrowser } from "./browser.js";

// Issue 14's acceptance in real Chromium with its virtual authenticator
// (DevTools WebAuthn domain): register through the URL and code that
// `ccmsg passkey add` prints, sign in, use the console, reload, sign out,
// sign in again; a replayed refresh token kills its family; removing the
// passkey ends access; a wrong Origin and an expired challenge fail with the
// contract's codes.

const b = sharedBrowser();
let inst: TestInstance;
/** The console as a person reaches it: `localhost`, a WebAuthn RP ID (an IP
 * address is not one). */
let base: string;
let origin: string;

beforeAll(async () => {
  inst = await startInstance();
  base = `http://localhost:${new URL(inst.http).port}/`;
  origin = base.slice(0, -1);
}, 30_000);
afterAll(async () => {
  await inst?.stop();
});

async function cli(args: string[]) {
  const r = await runCli(args, { ...inst.env, CCMSG_STATE_DIR: inst.stateDir });
  return r;
}

async function addPasskey(): Promise<{ url: string; code: string; sub: string }> {
  const r = await cli(["passkey", "add", "--name", "phone", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { url: string; code: string; sub: string };
}

/** A fresh browser profile with a platform authenticator that verifies its user. */
async function deviceWithAuthenticator(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await b.browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return { context, page };
}

/** `navigator.credentials.get` in the page for a challenge, without posting
 * it: what a browser would send to `auth/assert`. */
async function assertion(page: Page, challenge: string): Promise<Record<string, string>> {
  return page.evaluate(`(async (challenge) => {
    const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    const raw = Uint8Array.from(atob(challenge.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((challenge.length + 3) % 4)), (c) => c.charCodeAt(0));
    const cred = await navigator.credentials.get({ publicKey: { challenge: raw, rpId: location.hostname, userVerification: "required" } });
    const r = cred.response;
    const out = { raw_id: b64(cred.rawId), client_data_json: b64(r.clientDataJSON), authenticator_data: b64(r.authenticatorData), signature: b64(r.signature) };
    if (r.userHandle) out.user_handle = b64(r.userHandle);
    return out;
  })(${JSON.stringify(challenge)})`);
}

/** `navigator.credentials.create` in the page for a challenge, without
 * posting it: what a browser would send to `auth/register`. */
async function creation(page: Page, challenge: string): Promise<Record<string, string>> {
  return page.evaluate(`(async (challenge) => {
    const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    const raw = Uint8Array.from(atob(challenge.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((challenge.length + 3) % 4)), (c) => c.charCodeAt(0));
    const cred = await navigator.credentials.create({ publicKey: {
      challenge: raw, rp: { id: location.hostname, name: "ccmsg" },
      user: { id: crypto.getRandomValues(new Uint8Array(16)), name: "t", displayName: "t" },
      pubKeyCredParams: [{ type: "public-key", alg: -7 }],
      authenticatorSelection: { residentKey: "required", userVerification: "required" }, attestation: "none" } });
    const id = b64(cred.rawId);
    return { id, raw_id: id, client_data_json: b64(cred.response.clientDataJSON), attestation_object: b64(cred.response.attestationObject) };
  })(${JSON.stringify(challenge)})`);
}

const browserHeaders = () => ({ origin, "sec-fetch-site": "same-origin" });

async function challenge() {
  const r = await rawRequest(base, "POST", "/auth/challenge", { origin }, {});
  expect(r.status).toBe(200);
  return r.json as { challenge: string; issuer: string; expires_at: number };
}

async function refreshCookie(context: BrowserContext): Promise<string> {
  const [c] = await context.cookies(`${base}auth/refresh`);
  expect(c?.httpOnly).toBe(true);
  expect(c?.sameSite).toBe("Strict");
  return `${c!.name}=${c!.value}`;
}

/** A new access token from the browser's refresh cookie, handing the rotated
 * cookie back to the browser as its own fetch would. */
async function mint(context: BrowserContext): Promise<{ value: string; expires_at: number }> {
  const r = await rawRequest(
    base,
    "POST",
    "/auth/refresh",
    { ...browserHeaders(), cookie: await refreshCookie(context) },
    {},
  );
  expect(r.status).toBe(200);
  const [name, value] = refreshCookieOf(r)!.split("=") as [string, string];
  await context.addCookies([
    { name, value, url: `${base}auth/`, httpOnly: true, sameSite: "Strict" },
  ]);
  return (r.json as { access: { value: string; expires_at: number } }).access;
}

describe("passkeys in real Chromium", () => {
  let device: { context: BrowserContext; page: Page };
  let sub: string;

  it("registers through the printed URL and code, then uses the console", async () => {
    const added = await addPasskey();
    expect(added.url.startsWith(`${base}#register=`)).toBe(true);
    expect(added.code).toMatch(/^[0-9]{6}$/);
    expect(added.url).not.toContain(added.code);
    sub = added.sub;
    device = await deviceWithAuthenticator();
    const { page } = device;
    await page.goto(added.url);
    await page.waitForSelector('[data-page="register"]');
    // A wrong code first: refused, the page can try again.
    const wrong = added.code === "000000" ? "111111" : "000000";
    await page.fill('input[name="code"]', wrong);
    await page.click('button[type="submit"]');
    await page.waitForSelector("[data-sign-in-error]");
    await page.fill('input[name="code"]', added.code);
    await page.fill('input[name="device"]', "test phone");
    await page.click('button[type="submit"]');
    await page.waitForSelector('[data-conn="open"]');
    expect(await page.textContent("[data-person]")).toBe(sub);
    // The console works: a view that reads over HTTP and the WebSocket.
    await page.goto(`${base}#/kv`);
    await page.waitForSelector('[data-conn="open"]');
    const listed = JSON.parse((await cli(["passkey", "list", "--json"])).stdout) as {
      passkeys: { sub: string; device_label?: string; registered_ip?: string }[];
    };
    expect(listed.passkeys).toMatchObject([{ sub, device_label: "test phone" }]);
    // The same URL registers nothing twice.
    const again = await rawRequest(base, "POST", "/auth/register", browserHeaders(), {
      token: added.url.split("#register=")[1],
      code: added.code,
      challenge: await challenge(),
      credential: { id: "AA", raw_id: "AA", client_data_json: "AA", attestation_object: "AA" },
    });
    expect(again.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
  }, 60_000);

  it("stays signed in across a reload (refresh cookie), signs out, and signs in again", async () => {
    const { page, context } = device;
    const before = await refreshCookie(context);
    await page.reload();
    await page.waitForSelector('[data-conn="open"]');
    // Rotated on every use.
    expect(await refreshCookie(context)).not.toBe(before);
    await page.click("[data-sign-out]");
    await page.waitForSelector('[data-page="sign-in"]');
    await page.click("text=Sign in with a passkey");
    await page.waitForSelector('[data-conn="open"]');
    expect(await page.textContent("[data-person]")).toBe(sub);
  }, 60_000);

  it("a replayed refresh token kills its family and the browser's access with it", async () => {
    const { page, context } = device;
    const v0 = await refreshCookie(context);
    const use = (cookie: string) =>
      rawRequest(base, "POST", "/auth/refresh", { ...browserHeaders(), cookie }, {});
    const r1 = await use(v0);
    expect(r1.status).toBe(200);
    const v1 = refreshCookieOf(r1)!;
    const r2 = await use(v1);
    expect(r2.status).toBe(200);
    expect(refreshCookieOf(r2)).toBeDefined();
    // v0 is two rotations old: a replay.
    const replay = await use(v0);
    expect(replay.status).toBe(401);
    expect(replay.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    // The whole family is dead: the newest value, and the browser's socket.
    expect((await use(refreshCookieOf(r2)!)).json).toMatchObject({
      error: { code: "auth_invalid" },
    });
    await page.waitForSelector('[data-page="sign-in"]');
    // Only hashes of token values are stored: none of the values handed out
    // appears anywhere in the auth tables.
    const db = new Database(join(inst.stateDir, "ccmsg.db"), { readonly: true });
    try {
      const stored = JSON.stringify(
        ["auth_families", "auth_retired", "auth_access", "auth_credentials"].map((t) =>
          db.prepare(`SELECT * FROM ${t}`).all(),
        ),
      );
      for (const c of [v0, v1, refreshCookieOf(r2)!]) {
        const value = c.split("=")[1]!;
        expect(stored).not.toContain(value);
        expect(stored).toContain(createHash("sha256").update(value).digest("hex"));
      }
      const access = (r1.json as { access: { value: string } }).access.value;
      expect(stored).not.toContain(access);
    } finally {
      db.close();
    }
    // A fresh sign-in is a new family.
    await page.click("text=Sign in with a passkey");
    await page.waitForSelector('[data-conn="open"]');
  }, 60_000);

  it("refuses a wrong Origin, a missing Sec-Fetch-Site, a wrong RP ID and an expired challenge with the contract's codes", async () => {
    const { page } = device;
    const c = await challenge();
    const credential = await assertion(page, c.challenge);
    const body = { challenge: c, credential };
    const foreign = await rawRequest(
      base,
      "POST",
      "/auth/assert",
      { origin: `http://127.0.0.1:${new URL(base).port}`, "sec-fetch-site": "same-origin" },
      body,
    );
    expect(foreign.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    const typed = await rawRequest(
      base,
      "POST",
      "/auth/assert",
      { origin, "sec-fetch-site": "none" },
      body,
    );
    expect(typed.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    // The same assertion is good where it belongs (nothing above spent it).
    const ok = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), body);

    expect(ok.json).toMatchObject({ ok: true, sub });
    // Spent: a second use is refused.
    const twice = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), body);
    expect(twice.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    // A challenge past its 5 minutes.
    const old = await challenge();
    const late = await assertion(page, old.challenge);
    await inst.advanceClock(301_000);
    const expired = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), {
      challenge: old,
      credential: late,
    });
    expect(expired.json).toMatchObject({ ok: false, error: { code: "auth_expired" } });
    // A passkey whose recorded RP ID is not the one the browser signed for
    // (as if registered for another host): the rpIdHash does not match.
    // Browsers refuse to sign for a foreign RP ID, so the record is changed.
    const edit = (rpId: string) => {
      const db = new Database(join(inst.stateDir, "ccmsg.db"));
      try {
        db.prepare("UPDATE auth_credentials SET rp_id = ?").run(rpId);
      } finally {
        db.close();
      }
    };
    edit("elsewhere.example");
    try {
      const c2 = await challenge();
      const wrongRp = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), {
        challenge: c2,
        credential: await assertion(page, c2.challenge),
      });
      expect(wrongRp.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
      expect(JSON.stringify(wrongRp.json)).toMatch(/RP ID/i);
    } finally {
      edit("localhost");
    }
    // A challenge another instance issued.
    const other = await challenge();
    const elsewhere = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), {
      challenge: { ...other, issuer: "0".repeat(32) },
      credential: await assertion(page, other.challenge),
    });
    expect(elsewhere.json).toMatchObject({ ok: false, error: { code: "auth_unknown_issuer" } });
  }, 60_000);

  it("adds another device for the person signed in", async () => {
    const { page } = device;
    await page.click("text=Add a device");
    await page.waitForSelector("[data-added-device]");
    const text = (await page.textContent("[data-added-device]")) ?? "";
    const url = /https?:\/\/\S+#register=[A-Za-z0-9_.-]+/.exec(text)?.[0];
    const code = /code (\d{6})/.exec(text)?.[1];
    expect(url).toBeDefined();
    const laptop = await deviceWithAuthenticator();
    try {
      await laptop.page.goto(url!);
      await laptop.page.fill('input[name="code"]', code!);
      await laptop.page.click('button[type="submit"]');
      await laptop.page.waitForSelector('[data-conn="open"]');
      expect(await laptop.page.textContent("[data-person]")).toBe(sub);
    } finally {
      await laptop.context.close();
    }
    const listed = JSON.parse((await cli(["passkey", "list", "--json"])).stdout) as {
      passkeys: { sub: string }[];
    };
    expect(listed.passkeys.map((p) => p.sub)).toEqual([sub, sub]);
  }, 60_000);

  it("honours a registration without the challenge argument when this instance holds the signed challenge", async () => {
    const added = await addPasskey();
    const token = added.url.split("#register=")[1]!;
    const tablet = await deviceWithAuthenticator();
    try {
      await tablet.page.goto(base);
      const c = await challenge();
      const credential = await creation(tablet.page, c.challenge);
      const r = await rawRequest(base, "POST", "/auth/register", browserHeaders(), {
        token,
        code: added.code,
        credential,
      });
      expect(r.json).toMatchObject({ ok: true, sub: added.sub });
      expect(refreshCookieOf(r)).toBeDefined();
      // The challenge is spent with it.
      const again = await rawRequest(base, "POST", "/auth/register", browserHeaders(), {
        token,
        code: added.code,
        credential,
      });
      expect(again.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    } finally {
      await tablet.context.close();
    }
    expect((await cli(["passkey", "remove", added.sub])).code).toBe(0);
  }, 60_000);

  it("the WebSocket takes the access token as its subprotocol, reports and moves its deadline, and closes at it", async () => {
    const { context } = device;
    const a = await mint(context);
    const wsUrl = `ws://localhost:${new URL(base).port}/ws`;
    const open = (protocol: string, headers: Record<string, string>) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, [protocol], { headers });
        ws.once("open", () => resolve(ws));
        ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
        ws.once("error", reject);
      });
    // Another origin, or none (not a browser), is refused.
    await expect(open(`ccmsg.token.${a.value}`, { origin: "http://127.0.0.1:1" })).rejects.toThrow(
      /HTTP 403/,
    );
    await expect(open(`ccmsg.token.${a.value}`, {})).rejects.toThrow(/HTTP 403/);
    await expect(open("ccmsg.token.not-a-token", { origin })).rejects.toThrow(/HTTP 401/);
    const ws = await open(`ccmsg.token.${a.value}`, { origin });
    expect(ws.protocol).toBe(`ccmsg.token.${a.value}`);
    let nextId = 1;
    const replies = new Map<string, (v: Record<string, unknown>) => void>();
    ws.on("message", (data: Buffer) => {
      for (const line of data.toString().split("\n")) {
        if (line === "") continue;
        const f = JSON.parse(line) as Record<string, unknown>;
        replies.get(f.request_id as string)?.(f);
      }
    });
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    const call = (op: string, args: object = {}) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const id = String(nextId++);
        replies.set(id, resolve);
        ws.send(`${JSON.stringify({ op, request_id: id, ...args })}\n`);
      });
    // A person's token speaks for a person, never a session.
    const asSession = await call("hello", {
      role: "session",
      protocol_version: 3,
      sid: "0f0e0d0c-0b0a-4908-8706-050403020100",
    });
    expect(asSession).toMatchObject({ ok: false, error: { code: "invalid_args" } });
    const hello = await call("hello", { role: "user", protocol_version: 3 });
    expect(hello).toMatchObject({ ok: true, auth_expires_at: a.expires_at });
    // Past half its life the access token is re-minted; auth_refresh moves
    // the live connection's deadline to the new one's.
    await inst.advanceClock(ACCESS_TTL_MS * 0.6);
    const b2 = await mint(context);
    expect(b2.expires_at).toBeGreaterThan(a.expires_at);
    expect(await call("auth_refresh", { access_token: b2.value })).toMatchObject({
      ok: true,
      auth_expires_at: b2.expires_at,
    });
    expect(await call("auth_refresh", { access_token: "bm90LWEtdG9rZW4" })).toMatchObject({
      ok: false,
      error: { code: "auth_invalid" },
    });
    // Past the first deadline, the connection still serves.
    await inst.advanceClock(ACCESS_TTL_MS * 0.5);
    expect(await call("instance_ping")).toMatchObject({ ok: true });
    // Past the moved deadline it closes.
    await inst.advanceClock(ACCESS_TTL_MS);
    ws.send(`${JSON.stringify({ op: "instance_ping", request_id: "late" })}\n`);
    expect(await closed).toBe(4001);
  }, 60_000);

  it("removing the passkey ends access: the socket closes, the token and cookie are refused", async () => {
    const { page, context } = device;
    await page.waitForSelector('[data-conn="open"]');
    // The control-pane API and the console's API take the person's token.
    const access = await mint(context);
    const bearer = { authorization: `Bearer ${access.value}` };
    for (const path of ["/api/snapshot", "/api/health", "/api/console/held"])
      expect((await rawRequest(base, "GET", path, bearer)).status, path).toBe(200);
    const cookie = await refreshCookie(context);
    const r = await cli(["passkey", "remove", sub]);
    expect(r.code, r.stderr).toBe(0);
    await page.waitForSelector('[data-page="sign-in"]');
    const refreshed = await rawRequest(
      base,
      "POST",
      "/auth/refresh",
      { ...browserHeaders(), cookie },
      {},
    );
    expect(refreshed.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    for (const path of ["/api/snapshot", "/api/health"])
      expect((await rawRequest(base, "GET", path, bearer)).status, path).toBe(401);
    // Signing in with the removed passkey fails too.
    const c = await challenge();
    const gone = await rawRequest(base, "POST", "/auth/assert", browserHeaders(), {
      challenge: c,
      credential: await assertion(page, c.challenge),
    });
    expect(gone.json).toMatchObject({ ok: false, error: { code: "auth_invalid" } });
    expect((await cli(["passkey", "remove", sub])).code).not.toBe(0);
    await device.context.close();
  }, 60_000);
});
