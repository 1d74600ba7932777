import { spawn } from "node:child_process";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../src/client/client.js";
import { ownerHeaders } from "../helpers/http.js";
import {
  CLI,
  childEnv,
  isolatedHome,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";

// Issue 11: the instance serves the web console at `/`, on the same origin
// as /ws and /api, behind the same Host, Origin and owner checks.

let inst: TestInstance;
beforeAll(async () => {
  inst = await startInstance();
});
afterAll(async () => {
  await inst.stop();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request with exactly these headers (fetch cannot set Host); the
 * owner's bearer unless `anonymous`. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  options: { anonymous?: boolean; body?: string } = {},
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path.replace(/^\//, ""), inst.http),
      { method, headers: { ...(options.anonymous ? {} : ownerHeaders(inst.http)), ...headers } },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

async function assetPaths(): Promise<string[]> {
  const page = await raw("GET", "/");
  return [...page.body.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => `/${m[1]}`);
}

describe("serving the console", () => {
  it("answers / with the page, a strict CSP and no caching of the page", async () => {
    const r = await raw("GET", "/", { accept: "text/html" });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/html/);
    expect(r.body).toContain('<div id="app">');
    // No inline script: every script is a file of this origin.
    expect(r.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const csp = String(r.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    expect(r.headers["cache-control"]).toBe("no-cache");
  });

  it("serves the hashed assets with their types, cached for good", async () => {
    const paths = await assetPaths();
    expect(paths.some((p) => p.endsWith(".js"))).toBe(true);
    expect(paths.some((p) => p.endsWith(".css"))).toBe(true);
    for (const p of paths) {
      const r = await raw("GET", p);
      expect(r.status).toBe(200);
      expect(r.headers["content-type"]).toMatch(p.endsWith(".js") ? /javascript/ : /^text\/css/);
      expect(r.headers["cache-control"]).toContain("immutable");
      expect(r.headers["content-security-policy"]).toContain("default-src 'none'");
    }
    expect((await raw("GET", "/assets/nothing-here.js")).status).toBe(404);
    expect((await raw("GET", "/assets/..%2Fownr.secret")).status).toBe(404);
  });

  it("asks a browser without the owner's cookie to run ccmsg open, and serves nothing", async () => {
    const page = await raw("GET", "/", { accept: "text/html" }, { anonymous: true });
    expect(page.status).toBe(401);
    expect(page.body).toContain("ccmsg open");
    expect(page.body).not.toContain('<div id="app">');
    const [asset] = await assetPaths();
    const r = await raw("GET", asset!, {}, { anonymous: true });
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toMatchObject({ ok: false, code: "auth_invalid" });
  });

  it("signs a browser in through the one-time link and then serves it the console", async () => {
    const open = await runCli(["open", "--print", "--json", "--no-start"], {
      ...inst.env,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    const { url } = JSON.parse(open.stdout) as { url: string };
    const login = await raw(
      "GET",
      new URL(url).pathname + new URL(url).search,
      {},
      {
        anonymous: true,
      },
    );
    expect(login.status).toBe(200);
    const cookie = String(login.headers["set-cookie"]).split(";")[0]!;
    const page = await raw("GET", "/", { cookie, accept: "text/html" }, { anonymous: true });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<div id="app">');
  });

  it("refuses a foreign Origin or Host on the page, its assets, the API and the WebSocket", async () => {
    const [asset] = await assetPaths();
    const port = new URL(inst.http).port;
    for (const path of ["/", asset!, "/api/console/held", "/api/status"]) {
      expect((await raw("GET", path, { origin: "http://evil.example" })).status).toBe(403);
      expect((await raw("GET", path, { host: `evil.example:${port}` })).status).toBe(403);
    }
    const ws = inst.http.replace(/^http/, "ws") + "ws";
    await expect(
      Client.connectWebSocket(ws, { ...ownerHeaders(inst.http), origin: "http://evil.example" }),
    ).rejects.toThrow(/403/);
    const resume = await raw(
      "POST",
      `/api/console/sessions/${newSid()}/resume`,
      { origin: "http://evil.example", "content-type": "application/json" },
      { body: "{}" },
    );
    expect(resume.status).toBe(403);
  });
});

describe("the console's API", () => {
  it("counts and lists the messages held per session", async () => {
    const sender = await Peer.unix(inst.socket);
    const to = newSid();
    const away = await Peer.unix(inst.socket);
    await away.helloSession(to, { title: "away" });
    await sender.helloUser();
    const r = await sender.call<{ delivered: boolean }>("message_send", { to, text: "while away" });
    expect(r.delivered).toBe(false);
    const counts = JSON.parse((await raw("GET", "/api/console/held")).body) as {
      counts: Record<string, number>;
    };
    expect(counts.counts[to]).toBe(1);
    const list = JSON.parse((await raw("GET", `/api/console/held/${to}`)).body) as {
      messages: { text: string; from: string }[];
    };
    expect(list.messages).toMatchObject([{ text: "while away", from: "user" }]);
    expect((await raw("GET", "/api/console/held/not-a-sid")).status).toBe(400);
    sender.close();
    away.close();
  });

  it("answers the readiness summary of ccmsg status", async () => {
    const r = await raw("GET", "/api/status");
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ readiness: { status: expect.any(String) } });
  });

  it("reads a session's HUD through the instance's own command", async () => {
    const sid = newSid();
    const s = await Peer.unix(inst.socket);
    await s.helloSession(sid, { title: "hud me", cwd: inst.stateDir });
    const r = await raw("GET", `/api/console/sessions/${sid}/hud`);
    expect(r.status).toBe(200);
    const hud = JSON.parse(r.body) as { schema_version: string; sessionControls: unknown };
    expect(hud.schema_version).toBe("ecc.hud-status.v1");
    expect(hud.sessionControls).toBeDefined();
    const unknown = await raw("GET", `/api/console/sessions/${newSid()}/hud`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ code: "session_not_found" });
    s.close();
  });
});

describe("npm start", () => {
  it("prints the console's address with a one-time sign-in link", async () => {
    const { env } = isolatedHome();
    const child = spawn(process.execPath, [CLI, "daemon", "run", "--http", "127.0.0.1:0"], {
      env: childEnv({ ...env, npm_lifecycle_event: "start" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    let out = "";
    const link = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /sign in: (\S+)/.exec(out);
        if (m !== null) resolve(m[1]!);
      });
      void exited.then(() => reject(new Error(`exited: ${out}`)));
    });
    expect(out).toMatch(/^\{"event":"started"/);
    expect(out).toMatch(/Web console: http:\/\/127\.0\.0\.1:\d+\//);
    const login = await fetch(link, { redirect: "manual" });
    expect(login.status).toBe(200);
    expect(login.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
    child.kill("SIGTERM");
    await exited;
  });
});
