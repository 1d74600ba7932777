import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseDirectDelivery } from "../../src/contract/index.js";
import { readThreadLocks } from "../../src/harness/codex/thread-locks.js";
import { inboxRows } from "../helpers/db.js";
import { isolatedHome, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Route (a) for Codex (issue 9, item 4; harness.md §7.3): `codex queue` for a
// running thread of the instance's Codex home. A fake `codex` on PATH records
// how it was run and exits as told.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const FAKE_CODEX = `#!/usr/bin/env node
const fs = require("node:fs");
const path = require("node:path");
const dir = path.dirname(fs.realpathSync(process.argv[1]));
const st = fs.fstatSync(0);
const env = {};
for (const k of ["CODEX_HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR"]) env[k] = process.env[k] ?? null;
fs.appendFileSync(path.join(dir, "calls.jsonl"), JSON.stringify({
  argv: process.argv.slice(2), env, stdin: st.isFIFO() ? "pipe" : st.isCharacterDevice() ? "null" : "other",
}) + "\\n");
process.exit(Number(fs.readFileSync(path.join(dir, "exit-code"), "utf8")));
`;

interface Call {
  argv: string[];
  env: Record<string, string | null>;
  stdin: string;
}

describe("route (a) into Codex: codex queue", () => {
  it("queues for a running thread with a clean environment; a failure falls through and is offered after the next success", async () => {
    const { root, env } = isolatedHome();
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "codex"), FAKE_CODEX);
    chmodSync(join(bin, "codex"), 0o755);
    writeFileSync(join(bin, "exit-code"), "0");
    const codexHome = join(root, "codex");
    const locks = join(codexHome, "thread-writer-locks");
    mkdirSync(locks, { recursive: true });
    const inst = await startInstance({
      env: {
        ...env,
        PATH: `${bin}:${process.env.PATH}`,
        CODEX_HOME: codexHome,
        CODEX_THREAD_ID: newSid(),
        CLAUDE_CODE_SESSION_ID: newSid(),
        CLAUDE_PROJECT_DIR: root,
      },
    });
    const calls = (): Call[] =>
      readFileSync(join(bin, "calls.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Call);
    const [A, B] = [newSid(), newSid()];
    const a = await Peer.unix(inst.socket);
    await a.helloSession(A, { repo: "widgets", ws: "api" });
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B);
    // A running thread: Codex holds an exclusive flock on its lock file.
    const lock = join(locks, `${B}.lock`);
    writeFileSync(lock, "");
    const holder = spawn("flock", ["-x", lock, "sleep", "600"], {
      stdio: "ignore",
      detached: true,
    });
    const release = () => {
      try {
        process.kill(-holder.pid!, "SIGKILL");
      } catch {}
    };
    process.once("exit", release);
    const held = async () => {
      const read = await readThreadLocks(codexHome);
      return read.ok && read.threads.includes(B);
    };
    const deadline = Date.now() + 5000;
    while (!(await held()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    expect(await a.call("message_send", { to: B, text: "queued" })).toEqual({ delivered: true });
    const [first] = calls();
    expect(first!.argv.slice(0, 4)).toEqual(["queue", "--thread", B, "--message"]);
    expect(first!.argv).toHaveLength(5);
    expect(parseDirectDelivery(first!.argv[4]!)).toMatchObject({
      from: A,
      from_label: "widgets/api",
      text: "queued",
    });
    expect(first!.env).toEqual({
      CODEX_HOME: codexHome,
      CLAUDE_CONFIG_DIR: null,
      CLAUDE_CODE_SESSION_ID: null,
      CLAUDE_PROJECT_DIR: null,
    });
    expect(first!.stdin).toBe("null");

    // A non-zero exit is not a refusal: the next route decides (here: held).
    writeFileSync(join(bin, "exit-code"), "3");
    expect(await a.call("message_send", { to: B, text: "failed once" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
    expect(calls()).toHaveLength(2);

    // The next send offers the held one, then follows it (issue 25: never
    // past an older message).
    writeFileSync(join(bin, "exit-code"), "0");
    expect(await a.call("message_send", { to: B, text: "works again" })).toEqual({
      delivered: false,
      reason: "throttled",
    });
    await until(() => calls().length === 4);
    expect(calls().map((c) => parseDirectDelivery(c.argv[4]!)?.text)).toEqual([
      "queued",
      "failed once",
      "failed once",
      "works again",
    ]);
    await until(() =>
      inboxRows(inst.stateDir)
        .filter((r) => r.sid === B)
        .every((r) => r.state === "delivered"),
    );

    // The thread ended (its lock let go, the file left behind): codex is not
    // run; nor once the file is gone.
    release();
    while (await held()) await new Promise((r) => setTimeout(r, 20));
    for (const text of ["lock left behind", "no lock"]) {
      expect(await a.call("message_send", { to: B, text })).toMatchObject({ delivered: false });
      rmSync(lock, { force: true });
    }
    expect(calls()).toHaveLength(4);
    a.close();
    b.close();
    await inst.stop();
  });
});

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
