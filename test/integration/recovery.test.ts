import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  childEnv,
  defaultStateDir,
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid } from "../helpers/peer.js";

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

function stateDirOf(env: Record<string, string>): string {
  const dir = defaultStateDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wait until `pid` has exited (it is not our child, so no exit event). */
async function gone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still alive after 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  return r.pid as number;
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe("a socket file deleted while the instance runs", () => {
  it("the instance listens again: status, ping and stop reach the same instance", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir, CCMSG_HTTP: "127.0.0.1:0" };
    rmSync(inst.socket);
    const status = await runCli(["daemon", "status", "--json"], env);
    expect(json(status.stdout)).toMatchObject({ running: true, pid: inst.pid });
    const ping = await runCli(["ping", "--json"], env);
    expect(ping.code, ping.stderr).toBe(0);
    expect(json(ping.stdout).pid).toBe(inst.pid);
    rmSync(inst.socket);
    const stop = await runCli(["daemon", "stop", "--json"], env);
    expect(json(stop.stdout)).toEqual({ stopped: true });
    expect(await inst.exited).toBe(0);
    expect(existsSync(join(inst.stateDir, "instance.lock"))).toBe(false);
  });

  it("when it cannot listen again, status names the live pid and stop still stops it", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    // A directory where the socket was: nothing can listen there.
    for (;;) {
      try {
        rmSync(inst.socket, { force: true });
        mkdirSync(inst.socket);
        break;
      } catch {}
    }
    writeFileSync(join(inst.socket, "keep"), "");
    const status = await runCli(["daemon", "status", "--json"], env);
    expect(json(status.stdout)).toMatchObject({
      running: true,
      answering: false,
      pid: inst.pid,
    });
    const refused = await runCli(["ping", "--json"], env);
    expect(refused.code).toBe(1);
    expect(json(refused.stderr).error).toMatchObject({ code: "instance_unreachable" });
    expect((json(refused.stderr).error as { msg: string }).msg).toContain(`pid ${inst.pid}`);
    const stop = await runCli(["daemon", "stop", "--json"], env);
    expect(json(stop.stdout)).toEqual({ stopped: true });
    expect(await inst.exited).toBe(0);
    expect(existsSync(join(inst.stateDir, "instance.lock"))).toBe(false);
  }, 30_000);
});

describe("a damaged database", () => {
  it("daemon run names the file and the way out; --recover keeps it aside and starts empty", async () => {
    const { env } = isolatedHome();
    const stateDir = stateDirOf(env);
    const db = join(stateDir, "ccmsg.db");
    const garbage = Buffer.alloc(16 * 1024, 0x5a);
    writeFileSync(db, garbage);
    const refused = await runCli(["daemon", "run", "--state-dir", stateDir, "--http", "off"], env);
    expect(refused.code).toBe(1);
    const msg = (json(refused.stderr).error as { msg: string }).msg;
    expect(msg).toContain(db);
    expect(msg).toContain("ccmsg daemon run --recover");
    expect(readFileSync(db).equals(garbage)).toBe(true);
    // And in daemon.log, for whoever looks there afterwards: a failed start
    // still writes its line before the process exits.
    const logged = readFileSync(join(stateDir, "daemon.log"), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: "startup failed",
        err: expect.objectContaining({ message: expect.stringContaining(db) }),
      }),
    );

    const inst = await startInstance({ env, stateDir, args: ["--recover"] });
    const aside = readdirSync(stateDir).filter((f) => /^ccmsg\.db\.corrupt-\d{8}T\d{6}Z$/.test(f));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(stateDir, aside[0]!)).equals(garbage)).toBe(true);
    const set = await runCli(["kv", "set", "ns", "k", "1"], { ...env, CCMSG_STATE_DIR: stateDir });
    expect(set.code, set.stderr).toBe(0);
    expect(
      inst.log().some((l) => l.msg === "damaged database moved aside; starting an empty one"),
    ).toBe(true);
    expect(await inst.stop()).toBe(0);
  });

  it("temp files a dead writer left (a full disk) are removed at start; a live one's stays", async () => {
    const { env } = isolatedHome();
    const stateDir = stateDirOf(env);
    const dead = deadPid();
    const leftovers = [`instance.lock.${dead}.tmp`, `instance.json.${dead}.tmp`];
    for (const name of leftovers) writeFileSync(join(stateDir, name), "");
    const live = `instance.json.${process.pid}.tmp`;
    writeFileSync(join(stateDir, live), "");
    const inst = await startInstance({ env, stateDir });
    const names = readdirSync(stateDir);
    for (const name of leftovers) expect(names).not.toContain(name);
    expect(names).toContain(live);
    expect(await inst.stop()).toBe(0);
  });
});

describe("auto-start", () => {
  it("returns once HTTP is bound, even when binding HTTP is slow", async () => {
    const { env } = isolatedHome();
    const slow = join(ROOT, "test", "helpers", "slow-tcp-listen.mjs");
    const r = await runCli(["ping", "--json"], {
      ...env,
      CCMSG_HTTP: "127.0.0.1:0",
      NODE_OPTIONS: `--import ${slow}`,
    });
    expect(r.code, r.stderr).toBe(0);
    const ping = json(r.stdout);
    expect(ping.http).toEqual([expect.stringMatching(/^127\.0\.0\.1:\d+$/)]);
    const stop = await runCli(["daemon", "stop", "--json"], env);
    expect(json(stop.stdout)).toEqual({ stopped: true });
    await gone(ping.pid as number);
  });
});

describe("stopping --hook", () => {
  it("with no instance running starts none, says so and exits 0", async () => {
    const { env } = isolatedHome();
    const r = await runCli(
      ["stopping", "--hook"],
      { ...env, CCMSG_HTTP: "127.0.0.1:0" },
      JSON.stringify({ session_id: newSid(), hook_event_name: "SessionEnd", reason: "exit" }),
    );
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ stopped: false, reason: expect.any(String) });
    const stateDir = defaultStateDir(env);
    for (const name of ["instance.lock", "ccmsg.sock", "instance.json"])
      expect(existsSync(join(stateDir, name)), name).toBe(false);
  });
});

describe("npm start under a supervisor", () => {
  /** `npm start` in its own process group; resolves with the instance's
   * `started` line once it serves. */
  async function npmStart(stateDir: string, env: Record<string, string>) {
    const npm = spawn("npm", ["start", "--", "--state-dir", stateDir, "--http", "off"], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const exited = new Promise<number | null>((r) => npm.on("exit", (code) => r(code)));
    const started = await new Promise<{ pid: number }>((resolve, reject) => {
      let out = "";
      npm.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const line = out.split("\n").find((l) => l.startsWith('{"event":"started"'));
        if (line !== undefined) resolve(JSON.parse(line) as { pid: number });
      });
      void exited.then((code) => reject(new Error(`npm exited (${code}): ${out}`)));
    });
    return { npm, exited, pid: started.pid };
  }

  async function expectStopped(
    run: { npm: ChildProcess; exited: Promise<number | null>; pid: number },
    stateDir: string,
  ) {
    await run.exited;
    await gone(run.pid);
    // A graceful stop released the lock (a killed instance leaves it).
    expect(existsSync(join(stateDir, "instance.lock"))).toBe(false);
    expect(existsSync(join(stateDir, "ccmsg.sock"))).toBe(false);
  }

  it("SIGTERM to npm stops the instance, which releases its lock", async () => {
    const { env } = isolatedHome();
    const stateDir = stateDirOf(env);
    const run = await npmStart(stateDir, env);
    process.kill(run.npm.pid as number, "SIGTERM");
    await expectStopped(run, stateDir);
  }, 30_000);

  it("Ctrl-C (SIGINT to the whole group, npm forwarding it again) stops it gracefully", async () => {
    const { env } = isolatedHome();
    const stateDir = stateDirOf(env);
    const run = await npmStart(stateDir, env);
    process.kill(-(run.npm.pid as number), "SIGINT");
    await expectStopped(run, stateDir);
  }, 30_000);
});
