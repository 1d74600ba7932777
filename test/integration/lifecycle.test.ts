import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { LAST_LIVE_RETENTION_MS } from "../../src/contract/index.js";
import { stateFiles } from "../../src/state/paths.js";
import {
  CLI,
  childEnv,
  defaultStateDir,
  isolatedHome,
  runCli,
  startInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

describe("running an instance", () => {
  it("mints its id once, writes instance.json, and binds a 0600 socket", async () => {
    const inst = await startInstance();
    const id = readFileSync(join(inst.stateDir, "instance.id"), "utf8").trim();
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).toBe(inst.id);
    const info = JSON.parse(readFileSync(join(inst.stateDir, "instance.json"), "utf8"));
    expect(info).toMatchObject({
      instance: id,
      pid: inst.pid,
      socket: inst.socket,
      http: inst.http,
    });
    expect(info.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(typeof info.started_at).toBe("number");
    expect(typeof info.version).toBe("string");
    expect(statSync(inst.socket).mode & 0o777).toBe(0o600);
    expect(statSync(inst.stateDir).mode & 0o777).toBe(0o700);
    await inst.stop();
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    expect(again.id).toBe(id);
    await again.stop();
  });

  it("refuses a second instance on the same state dir while the first lives", async () => {
    const first = await startInstance();
    const second = await runCli(
      ["daemon", "run", "--state-dir", first.stateDir, "--http", "127.0.0.1:0"],
      first.env,
    );
    expect(second.code).not.toBe(0);
    expect(JSON.parse(second.stderr).error.msg).toContain(`pid ${first.pid}`);
    const peer = await Peer.unix(first.socket);
    expect((await peer.call("instance_ping")).pid).toBe(first.pid);
    peer.close();
    await first.stop();
  });

  it("after kill -9, the next start takes over without manual cleanup", async () => {
    const first = await startInstance();
    await first.kill();
    expect(existsSync(join(first.stateDir, "instance.lock"))).toBe(true);
    const next = await startInstance({ env: first.env, stateDir: first.stateDir });
    const peer = await Peer.unix(join(first.stateDir, "ccmsg.sock"));
    const ping = await peer.call("instance_ping");
    expect(ping.pid).toBe(next.pid);
    expect(ping.instance).toBe(first.id);
    peer.close();
    await next.stop();
  });

  it("SIGTERM: every connection hears restarting, exit within 1 s, nothing left behind", async () => {
    const inst = await startInstance();
    const session = await Peer.unix(inst.socket);
    await session.helloSession(newSid());
    const person = await Peer.ws(`${inst.http}ws`);
    await person.helloUser();
    const heard = [session, person].map((p) => p.next((f) => f.ev === "restarting"));
    const t0 = Date.now();
    expect(await inst.stop()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1000);
    for (const f of await Promise.all(heard))
      expect(f).toEqual({ ev: "restarting", instance: inst.id });
    for (const name of ["ccmsg.sock", "instance.lock", "instance.json"]) {
      expect(existsSync(join(inst.stateDir, name)), name).toBe(false);
    }
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    await again.stop();
  });

  it("instance_shutdown: the person gets the reply before the process goes", async () => {
    const inst = await startInstance();
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    const reply = await person.request("instance_shutdown");
    expect(reply).toEqual({ ok: true, request_id: expect.any(String) });
    expect(await inst.exited).toBe(0);
  });
});

describe("stopping at once", () => {
  it("a stop right after the start still exits cleanly, its log complete", async () => {
    const inst = await startInstance({ args: ["--http", "off"] });
    expect(await inst.stop()).toBe(0);
    expect(inst.log().at(-1)).toMatchObject({ msg: "stopped" });
  });

  it("a SIGTERM once the socket answers, before HTTP is up, still stops cleanly", async () => {
    const { env } = isolatedHome();
    const stateDir = defaultStateDir(env);
    const files = stateFiles(stateDir);
    const args = ["daemon", "run", "--state-dir", stateDir, "--http", "127.0.0.1:0"];
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(env), stdio: "ignore" });
    let gone = false;
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      child.on("exit", (code, signal) => {
        gone = true;
        resolve([code, signal]);
      }),
    );
    try {
      // The first moment a client can be served: the socket accepts.
      let peer: Peer | undefined;
      while (peer === undefined && !gone)
        peer = await Peer.unix(files.socket).catch(() => sleep(1));
      if (peer === undefined) throw new Error(`the instance exited first: ${await exited}`);
      expect((await peer.request("instance_ping")).ok).toBe(true);
      child.kill("SIGTERM");
      expect(await exited).toEqual([0, null]);
      peer.close();
      for (const path of [files.socket, files.lock, files.instanceJson])
        expect(existsSync(path), path).toBe(false);
      expect(readFileSync(files.log, "utf8")).toContain('"msg":"stopped"');
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("sessions across a graceful stop", () => {
  it("a session still connected at the stop is in last_live after the restart; a paused one stays paused", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await Peer.unix(inst.socket);
    await a.helloSession(A, { repo: "r", ws: "a", cwd: "/r/a" });
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B, { cwd: "/r/b" });
    const { stopped_at } = await b.call<{ stopped_at: number }>("session_stopping");
    expect(await inst.stop()).toBe(0);
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    const p = await Peer.unix(again.socket);
    await p.helloUser();
    const rows = ((await p.subscribe("peers")).data as { last_live: Record<string, unknown>[] })
      .last_live;
    expect(rows.find((r) => r.sid === A)).toMatchObject({
      state: "disappeared",
      repo: "r",
      ws: "a",
    });
    expect(rows.find((r) => r.sid === B)).toMatchObject({ state: "paused", stopped_at });
    p.close();
    await again.stop();
  });
});

describe("what the instance keeps of a lost session", () => {
  it("only for its last_live retention: back within it, connected_at is the first registration; back after it, the new one", async () => {
    const inst = await startInstance();
    const watcher = await Peer.unix(inst.socket);
    await watcher.helloUser();
    await watcher.subscribe("peers");
    type Rows = { peers: { sid: string; connected_at: number }[]; last_live: { sid: string }[] };
    const A = newSid();
    /** The watcher's next frame from now on that satisfies `pred`. */
    const from = (pred: (d: Rows) => boolean) => {
      const start = watcher.frames.length;
      return watcher.next((f) => watcher.frames.indexOf(f) >= start && pred(f.data as Rows));
    };
    const listed = (d: Rows) => d.peers.some((r) => r.sid === A);
    const lost = (d: Rows) => !listed(d) && d.last_live.some((r) => r.sid === A);
    const visit = async (): Promise<number> => {
      const a = await Peer.unix(inst.socket);
      const seen = from(listed);
      await a.helloSession(A, { repo: "r", ws: "a", cwd: "/r/a" });
      const row = ((await seen).data as Rows).peers.find((r) => r.sid === A)!;
      const left = from(lost);
      a.close();
      await left;
      return row.connected_at;
    };
    const first = await visit();
    // A minute short of it: real time passes too, and a loaded machine may
    // take seconds between the visits.
    await inst.advanceClock(LAST_LIVE_RETENTION_MS - 60_000);
    expect(await visit()).toBe(first);
    const gone = from((d) => !listed(d) && !lost(d));
    const expiredAt = await inst.advanceClock(LAST_LIVE_RETENTION_MS + 1);
    await gone;
    expect(await visit()).toBeGreaterThanOrEqual(expiredAt);
    watcher.close();
    await inst.stop();
  });
});
