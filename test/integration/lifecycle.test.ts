import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startInstance } from "../helpers/instance.js";
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
