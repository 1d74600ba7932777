import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { Client } from "../../src/client/client.js";
import { OPEN_TOKEN_LIFETIME_MS } from "../../src/state/owner-credential.js";
import { VERSION } from "../../src/util/version.js";
import { ownerHeaders } from "../helpers/http.js";
import { isolatedHome, runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { Peer } from "../helpers/peer.js";

// Issue 8, item 9: the TCP side (HTTP routes, the WebSocket) answers the
// instance's owner only — another account on the machine reaches loopback
// too. And the state directory is private whatever the umask.

let inst: TestInstance;
let secret: string;
let wsUrl: string;
beforeAll(async () => {
  inst = await startInstance();
  secret = readFileSync(join(inst.stateDir, "owner.secret"), "utf8").trim();
  wsUrl = `${inst.http.replace("http:", "ws:")}ws`;
});
afterAll(async () => {
  await inst.stop();
});

/** What a process of another account sees when it tries the instance. */
const STRANGER = `
const [base, stateDir] = process.argv.slice(1);
const http = require("node:http");
const out = {};
try { require("node:fs").readFileSync(stateDir + "/owner.secret"); out.secret = "read"; }
catch (e) { out.secret = e.code; }
const upgrade = () => new Promise((resolve) => {
  const req = http.request(base + "ws", { headers: {
    connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } });
  req.on("upgrade", (res, socket) => { socket.destroy(); resolve({ status: res.statusCode }); });
  req.on("response", (res) => {
    let body = ""; res.on("data", (c) => { body += c; });
    res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
  });
  req.on("error", (e) => resolve({ error: e.message }));
  req.end();
});
(async () => {
  out.ws = await upgrade();
  const get = await fetch(base + "api/snapshot");
  out.snapshot = { status: get.status, body: await get.json() };
  const post = await fetch(base + "api/work-items", { method: "POST",
    headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) });
  out.post = { status: post.status };
  const health = await fetch(base + "api/health");
  out.health = { status: health.status, body: await health.json() };
  console.log(JSON.stringify(out));
})();
`;

interface Seen {
  secret: string;
  ws: { status?: number; body?: { code?: string }; error?: string };
  snapshot: { status: number; body: Record<string, unknown> };
  post: { status: number };
  health: { status: number; body: Record<string, unknown> };
}

function asNobody(args: string[]): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", STRANGER, ...args], {
      uid: 65534,
      gid: 65534,
      cwd: "/",
      env: { PATH: process.env.PATH },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.on("error", reject);
    child.on("close", () => resolve(JSON.parse(out) as Seen));
  });
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, redirect: "manual" });
  const text = await res.text();
  const json = res.headers.get("content-type")?.startsWith("application/json") ?? false;
  return { status: res.status, headers: res.headers, text, body: json ? JSON.parse(text) : {} };
}

async function openLink(): Promise<string> {
  const r = await runCli(["open", "--json", "--state-dir", inst.stateDir], inst.env);
  expect(r.code, r.stderr).toBe(0);
  const { url, expires_at } = JSON.parse(r.stdout) as { url: string; expires_at: number };
  expect(url.startsWith(`${inst.http}owner/login?token=`)).toBe(true);
  expect(expires_at).toBeGreaterThan(Date.now());
  return url;
}

describe("the owner credential", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "refuses another account: no WebSocket, no API, and the secret is out of its reach",
    async () => {
      const seen = await asNobody([inst.http, inst.stateDir]);
      expect(seen.secret).toBe("EACCES");
      expect(seen.ws.status).toBe(401);
      expect(seen.ws.body?.code).toBe("auth_invalid");
      expect(seen.snapshot.status).toBe(401);
      expect(seen.snapshot.body).toMatchObject({ ok: false, code: "auth_invalid" });
      expect(JSON.stringify(seen.snapshot.body)).not.toContain("workItems");
      expect(seen.post.status).toBe(401);
      // Whether an instance runs here is anyone's on this machine: that and
      // its version, nothing the owner's answer holds.
      expect(seen.health).toEqual({ status: 200, body: { ok: true, version: expect.any(String) } });
      const snap = await get(`${inst.http}api/snapshot`, ownerHeaders(inst.http));
      expect(snap.body.workItems.items).toEqual([]);
    },
  );

  it("lets the owner in with the secret: Bearer on HTTP and WebSocket", async () => {
    expect((await get(`${inst.http}api/health`, ownerHeaders(inst.http))).status).toBe(200);
    const peer = await Peer.ws(wsUrl);
    await peer.helloUser();
    await peer.call("kv_write", { ns: "owner", key: "k", value: 1 });
    peer.close();
    const wrong = { authorization: `Bearer ${secret.slice(1)}x` };
    expect((await get(`${inst.http}api/health`, wrong)).status).toBe(401);
    // No credential at all: only that it runs, and its version.
    const anyone = await get(`${inst.http}api/health`);
    expect(anyone).toMatchObject({ status: 200, body: { ok: true, version: VERSION } });
    expect(Object.keys(anyone.body)).toEqual(["ok", "version"]);
    // A browser page asking the same is told it is signed out (the console's probe).
    expect((await get(`${inst.http}api/health`, { "sec-fetch-dest": "empty" })).status).toBe(401);
    const owner = await get(`${inst.http}api/health`, ownerHeaders(inst.http));
    expect(owner.body).toMatchObject({ ok: true, dbPath: expect.any(String) });
    await expect(Client.connectWebSocket(wsUrl, wrong)).rejects.toThrow(/401/);
  });

  it("takes the secret as the ccmsg.token subprotocol and echoes it", async () => {
    const protocol = `ccmsg.token.${secret}`;
    const ws = new WebSocket(wsUrl, [protocol]);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    expect(ws.protocol).toBe(protocol);
    const reply = new Promise<string>((resolve) => ws.once("message", (d) => resolve(String(d))));
    ws.send('{"op":"instance_ping","request_id":"1"}\n');
    expect(JSON.parse(await reply)).toMatchObject({ ok: true, request_id: "1" });
    ws.close();
    const bad = new WebSocket(wsUrl, ["ccmsg.token.not-the-secret"]);
    const status = await new Promise<number>((resolve) =>
      bad.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  });

  it("exchanges a one-time link for an HttpOnly SameSite=Strict cookie, once", async () => {
    const url = await openLink();
    const first = await get(url);
    // A page of this origin sends the browser on, so the Strict cookie goes
    // with the next request (a 303 from a link opened elsewhere would not).
    expect(first.status).toBe(200);
    expect(first.text).toContain('http-equiv="refresh" content="0;url=/"');
    const setCookie = first.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(";")[0]!;

    // The cookie opens the API and the WebSocket, as a browser would use it.
    expect((await get(`${inst.http}api/snapshot`, { cookie })).status).toBe(200);
    const browser = await Client.connectWebSocket(wsUrl, { cookie });
    expect((await browser.call("instance_ping")).instance).toBe(inst.id);
    browser.close();
    const forged = `${cookie.slice(0, -2)}xx`;
    expect((await get(`${inst.http}api/snapshot`, { cookie: forged })).status).toBe(401);

    // The link is spent: a second use gets nothing.
    const again = await get(url);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe("auth_invalid");
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  it("keeps a reverse proxy's path prefix for the cookie, and nothing else from the path", async () => {
    const token = new URL(await openLink()).searchParams.get("token");
    const prefixed = await get(`${inst.http}console/owner/login?token=${token}`);
    expect(prefixed.headers.get("set-cookie")).toContain("; Path=/console/;");
    const odd = new URL(await openLink()).searchParams.get("token");
    const injected = await get(`${inst.http}x;Domain=evil.example/owner/login?token=${odd}`);
    expect(injected.headers.get("set-cookie")).toContain("; Path=/;");
    expect(injected.headers.get("set-cookie")).not.toContain("evil");
  });

  it("opens a browser through a private page, never with the link on its command line", async () => {
    const home = isolatedHome();
    const record = join(home.root, "browser-args");
    const script = join(home.root, "browser.sh");
    writeFileSync(script, `#!/bin/sh\necho "$@" > ${record}.tmp && mv ${record}.tmp ${record}\n`, {
      mode: 0o700,
    });
    const r = await runCli(["open", "--text", "--state-dir", inst.stateDir], {
      ...inst.env,
      BROWSER: script,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${inst.http}owner/login?token=`);
    const deadline = Date.now() + 5000;
    while (!existsSync(record) && Date.now() < deadline)
      await new Promise((f) => setTimeout(f, 20));
    const target = readFileSync(record, "utf8").trim();
    expect(target).toBe(`file://${join(inst.stateDir, "open.html")}`);
    expect(target).not.toContain("token");
    const page = join(inst.stateDir, "open.html");
    expect(statSync(page).mode & 0o777).toBe(0o600);
    const link = /url=([^"]+)"/.exec(readFileSync(page, "utf8"))![1]!.replace(/&amp;/g, "&");
    expect((await get(link)).status).toBe(200);
  });

  it("refuses a link past its lifetime with auth_expired (moves the clock: last)", async () => {
    const url = await openLink();
    await inst.advanceClock(OPEN_TOKEN_LIFETIME_MS + 1000);
    const late = await get(url);
    expect(late.status).toBe(401);
    expect(late.body.code).toBe("auth_expired");
  });

  it("says so when the instance serves no HTTP", async () => {
    const off = await startInstance({ args: ["--http", "off"] });
    const r = await runCli(["open", "--json", "--state-dir", off.stateDir], off.env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error.code).toBe("capability_unavailable");
    await off.stop();
  });
});

describe("the state directory", () => {
  it("is private under umask 000: dir 0700, every file 0600, an open dir closed", async () => {
    const home = isolatedHome();
    const stateDir = join(home.root, "loose-state");
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o755);
    // Left by an older build: readable by everyone.
    writeFileSync(join(stateDir, "daemon.log"), "", { mode: 0o644 });
    chmodSync(join(stateDir, "daemon.log"), 0o644);
    const umask = process.umask(0);
    let started: TestInstance;
    try {
      started = await startInstance({ stateDir, env: home.env });
    } finally {
      process.umask(umask);
    }
    const peer = await Peer.unix(started.socket);
    await peer.helloUser();
    await peer.call("kv_write", { ns: "modes", key: "k", value: "v" });
    const mode = (name: string) => statSync(join(stateDir, name)).mode & 0o777;
    expect(mode(".")).toBe(0o700);
    for (const name of [
      "ccmsg.db",
      "ccmsg.db-wal",
      "ccmsg.db-shm",
      "daemon.log",
      "instance.json",
      "instance.id",
      "instance.lock",
      "owner.secret",
      "ccmsg.sock",
    ]) {
      expect(mode(name).toString(8), name).toBe("600");
    }
    peer.close();
    await started.stop();
  });

  it("keeps daemon.log.out private when the CLI starts the instance under umask 000", async () => {
    const home = isolatedHome();
    const stateDir = join(home.root, "bg-state");
    const umask = process.umask(0);
    let r: Awaited<ReturnType<typeof runCli>>;
    try {
      r = await runCli(["daemon", "start", "--http", "off", "--state-dir", stateDir], home.env);
    } finally {
      process.umask(umask);
    }
    expect(r.code, r.stderr).toBe(0);
    expect((statSync(stateDir).mode & 0o777).toString(8)).toBe("700");
    expect((statSync(join(stateDir, "daemon.log.out")).mode & 0o777).toString(8)).toBe("600");
    await runCli(["daemon", "stop", "--state-dir", stateDir], home.env);
  });
});
