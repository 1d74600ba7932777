import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthRecordsStore } from "../../src/store/auth-records.js";
import { CLI, childEnv, defaultStateDir, isolatedHome, runCli } from "../helpers/instance.js";

// Issue 25, item 8: with the asked HTTP port taken, `npm start` still gives
// a console — on a free loopback port, said on one line, printed as usual and
// recorded where `ccmsg open` finds it — unless something names the port.

let holder: Server;
let taken: string;
beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  taken = `127.0.0.1:${(holder.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => holder.close(() => resolve()));
});

function home(config?: Record<string, unknown>): Record<string, string> {
  const { env } = isolatedHome();
  if (config !== undefined) {
    mkdirSync(join(env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true, mode: 0o700 });
    writeFileSync(join(env.XDG_CONFIG_HOME!, "ccmsg", "config.json"), JSON.stringify(config));
  }
  return env;
}

describe("npm start with its port taken", () => {
  it("serves the console on a free port, says so, and `ccmsg open` finds it", async () => {
    const env = home();
    const child = spawn(process.execPath, [CLI, "daemon", "run", "--http", taken], {
      env: childEnv({ ...env, npm_lifecycle_event: "start" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    let out = "";
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    try {
      const link = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          const m = /sign in: (\S+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        void exited.then(() => reject(new Error(`exited: ${out}${err}`)));
      });
      const started = JSON.parse(out.split("\n")[0]!) as { http: string | null };
      expect(started.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const http = started.http!;
      const moved = new URL(http).host;
      expect(moved).not.toBe(taken);
      expect(err).toContain(
        `ccmsg: ${taken} is in use, so HTTP took a free port for this run: ${moved}\n`,
      );
      expect(out).toContain(`Web console: ${http}\n`);
      expect(new URL(link).host).toBe(moved);

      // The link signs this browser in, and the console answers there.
      const login = await fetch(link, { redirect: "manual" });
      expect(login.status).toBe(200);
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
      const page = await fetch(http, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);

      // Where the others look: instance.json, `daemon status`, `ccmsg open`.
      const stateDir = defaultStateDir(env);
      const json = JSON.parse(readFileSync(join(stateDir, "instance.json"), "utf8"));
      expect(json.http).toBe(http);
      const cli = { ...env, CCMSG_STATE_DIR: stateDir };
      const status = await runCli(["daemon", "status", "--json"], cli);
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, http });
      const open = await runCli(["open", "--print", "--json"], cli);
      expect(open.code).toBe(0);
      const url = (JSON.parse(open.stdout) as { url: string }).url;
      expect(new URL(url).host).toBe(moved);
      expect((await fetch(url, { redirect: "manual" })).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});

/** `daemon run --http <taken>` to its exit, or — should it start after all —
 * until its `started` line, then stopped. */
function run(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, "daemon", "run", "--http", taken], {
    env: childEnv({ ...env, CCMSG_STATE_DIR: defaultStateDir(env) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout.once("data", () => child.kill("SIGTERM"));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("a taken port that something names stays refused", () => {
  it("http.endpoint: a proxy forwards to that port", async () => {
    const r = await run(home({ http: { endpoint: "https://box.example.ts.net/" } }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${taken} is in use, and HTTP may not move to another port: http.endpoint (https://box.example.ts.net/) is proxied to it`,
    );
  });

  it("the mesh list: its instances reach this one at that port", async () => {
    const r = await run(home({ mesh: { endpoints: [{ endpoint: "http://127.0.0.1:9/" }] } }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${taken} is in use, and HTTP may not move to another port`);
    expect(r.stderr).toContain("the mesh list");
  });

  it("a passkey registered for the endpoint at that port", async () => {
    const env = home();
    const stateDir = defaultStateDir(env);
    const cli = { ...env, CCMSG_STATE_DIR: stateDir };
    // A first run makes the store; the passkey is put in it as registration would.
    const first = await runCli(["daemon", "start", "--http", "off"], cli);
    expect(first.code).toBe(0);
    expect((await runCli(["daemon", "stop"], cli)).code).toBe(0);
    const db = new Database(join(stateDir, "ccmsg.db"));
    const endpoint = `http://localhost:${new URL(`http://${taken}`).port}/`;
    new AuthRecordsStore(db).addCredential({
      ...{ credential_id: "cred-1", sub: "box-1", public_key: "AA", user_handle: "uh" },
      ...{ endpoint, webui: endpoint.slice(0, -1), rp_id: "localhost", sign_count: 0 },
      ...{ backup_eligible: null, backup_state: null, issued_label: null, device_label: null },
      ...{ registered_at: Date.now(), registered_ip: null, registered_user_agent: null },
    });
    db.close();
    const r = await run(env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`passkeys are registered for ${endpoint}`);
  });
});
