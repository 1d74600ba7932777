import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inboxRows } from "../helpers/db.js";
import { FakeModel } from "../helpers/fake-model.js";
import { isolatedHome, ROOT, runCli, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { CLAUDE, claudeSetup, until } from "../helpers/real-claude.js";

// Issue 25 with the REAL Claude Code (harness spec §11.1, DR-0053): a paused
// session with five messages held is resumed with `claude -p --resume <sid>`,
// with ccmsg's plugin installed as a person would (its hooks: hello, the
// waiter, inbox --hook) and route (a) on, so the socket and the inbox hook
// both reach for the held messages as it starts. Whatever takes them, the
// model reads them oldest first. (The old build gave it the last ones first,
// through the hook, in 2 of 4 runs.)

const BIN = join(ROOT, "node_modules", ".bin");
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

/** Run `claude` to its end (a print run): its exit code and output. */
function runClaude(args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const run = spawn(CLAUDE, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    run.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    run.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const timer = setTimeout(() => {
      run.kill("SIGKILL");
      reject(new Error(`claude ${args.join(" ")} still running after 60 s`));
    }, 60_000);
    run.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe("held messages at resume, with the real Claude Code", () => {
  it("a session resumed with claude -p --resume reads its held messages in mid order", async () => {
    const { env } = isolatedHome();
    const inst = await startInstance({ env });
    cleanups.push(() => inst.stop());
    const model = await FakeModel.start(() => ({ text: "ok" }));
    cleanups.push(() => model.close());
    const cwd = join(env.HOME!, "widgets");
    mkdirSync(cwd, { recursive: true });
    const claudeEnv = claudeSetup(
      { HOME: env.HOME!, CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR! },
      cwd,
      model.url,
      // The real `claude` on PATH for `ccmsg plugin install`; the runtime
      // dir the instance's own socket lives under.
      { PATH: `${BIN}:${process.env.PATH}`, XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR! },
    );
    const installed = await runCli(["plugin", "install", "claude", "--json"], {
      ...claudeEnv,
      XDG_STATE_HOME: env.XDG_STATE_HOME,
      XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    expect(installed.code, installed.stderr).toBe(0);

    // A first run: the session greets (hello --hook) and ends paused.
    const first = await runClaude(["-p", "hello", "--output-format", "json"], cwd, claudeEnv);
    expect(first.code, first.err).toBe(0);
    const sid = (JSON.parse(first.out) as { session_id: string }).session_id;
    const sender = await Peer.unix(inst.socket);
    cleanups.push(() => sender.close());
    await sender.helloSession(newSid(), { repo: "widgets" });
    const texts = ["held one", "held two", "held three", "held four", "held five"];
    for (const text of texts)
      expect(await sender.call("message_send", { to: sid, text })).toMatchObject({
        delivered: false,
        reason: "paused",
      });

    const before = model.requests.length;
    const resumed = await runClaude(
      ["-p", "--resume", sid, "carry on", "--output-format", "json"],
      cwd,
      claudeEnv,
    );
    expect(resumed.code, resumed.err).toBe(0);
    const requests = model.requests.slice(before).filter((r) => r.sid === sid);
    // Every request holds the conversation so far: the messages in it are
    // the oldest ones, in mid order; the last holds them all.
    const seen = requests.map((r) => texts.map((t) => r.raw.indexOf(t)).filter((i) => i >= 0));
    const report = requests.map((r) => texts.map((t) => r.raw.indexOf(t)));
    for (const positions of seen) {
      expect(positions, JSON.stringify(report)).toEqual([...positions].sort((x, y) => x - y));
    }
    for (const r of requests) {
      const present = texts.map((t) => r.raw.includes(t));
      expect(present, JSON.stringify(report)).toEqual(
        present.map((_p, i) => present.slice(i).some(Boolean)),
      );
    }
    // A print run ends once its queue is empty: what reached the socket
    // after that waits for the next run. The run read the oldest at least,
    // each once.
    const read = seen.at(-1) ?? [];
    expect(read.length, JSON.stringify(report)).toBeGreaterThan(0);
    const last = requests.at(-1)!.raw;
    expect(texts.map((t) => last.split(t).length - 1)).toEqual(
      texts.map((_t, i) => (i < read.length ? 1 : 0)),
    );
    // Nothing lost, nothing twice: what the model read is delivered, the
    // rest is delivered (taken by the harness as it ended) or still held.
    const states = () => {
      const rows = inboxRows(inst.stateDir).filter((r) => r.sid === sid);
      return texts.map((t) =>
        rows
          .filter((r) => r.text === t)
          .map((r) => r.state)
          .join(),
      );
    };
    const settled = (st: string[]) =>
      st.every((s, i) => (i < read.length ? s === "delivered" : ["delivered", "held"].includes(s)));
    await until("every one settled", () => (settled(states()) ? true : undefined)).catch(() => {});
    expect(states(), JSON.stringify(report)).toSatisfy(settled);
  }, 150_000);
});
