import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultStateDir, isolatedHome, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** Poll the state dir (the log is written in the background) until `cond`. */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met within 10 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

function stateDirOf(env: Record<string, string>): string {
  const dir = defaultStateDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

describe("the instance log", () => {
  it("on a full disk (daemon.log → /dev/full) the instance keeps answering, stops cleanly, and later counts the lines it lost", async () => {
    const { env } = isolatedHome();
    const stateDir = stateDirOf(env);
    const logPath = join(stateDir, "daemon.log");
    symlinkSync("/dev/full", logPath);
    const inst = await startInstance({ env, stateDir });
    const peer = await Peer.unix(inst.socket);
    await peer.helloSession(newSid());
    // Each stop declaration writes a log line; every write fails (ENOSPC).
    for (let i = 0; i < 200; i++) {
      await peer.call("session_stopping", { reason: `r${i} ${"x".repeat(10_000)}` });
      if (i % 50 === 0) expect((await peer.call("instance_ping")).pid).toBe(inst.pid);
    }
    expect((await peer.call("instance_ping")).pid).toBe(inst.pid);
    // Space returns (the file becomes writable): the gap is reported once.
    rmSync(logPath);
    await until(() => existsSync(logPath) && inst.log().some((l) => "dropped" in l));
    const notices = inst.log().filter((l) => "dropped" in l);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.dropped).toBeGreaterThan(0);
    peer.close();
    expect(await inst.stop()).toBe(0);
    expect(existsSync(join(stateDir, "instance.lock"))).toBe(false);
  });

  it("long client-chosen strings are cut, and the log rotates: its files stay bounded", async () => {
    const { env } = isolatedHome();
    const max = 64 * 1024;
    const inst = await startInstance({ env: { ...env, CCMSG_TEST_LOG_MAX_BYTES: String(max) } });
    const peer = await Peer.unix(inst.socket);
    await peer.helloSession(newSid());
    const reason = "y".repeat(64 * 1024);
    // All in flight: the shape of the flood that grew the log by 50 MiB.
    await Promise.all(Array.from({ length: 400 }, () => peer.call("session_stopping", { reason })));
    expect((await peer.call("instance_ping")).pid).toBe(inst.pid);
    peer.close();
    expect(await inst.stop()).toBe(0);
    const files = readdirSync(inst.stateDir).filter((f) => /^daemon\.log(\.\d+)?$/.test(f));
    expect(files.sort()).toEqual(["daemon.log", "daemon.log.1", "daemon.log.2", "daemon.log.3"]);
    let total = 0;
    for (const f of files) {
      const text = readFileSync(join(inst.stateDir, f), "utf8");
      total += statSync(join(inst.stateDir, f)).size;
      for (const line of text.split("\n").filter(Boolean)) {
        const record = JSON.parse(line) as { reason?: string };
        if (record.reason !== undefined) expect(record.reason.length).toBeLessThan(2100);
      }
    }
    // Four files of at most `max` bytes each (plus one line of slack).
    expect(total).toBeLessThanOrEqual(4 * max + 4096);
  });
});
