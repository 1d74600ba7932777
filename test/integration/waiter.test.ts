import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDirectDelivery } from "../../src/contract/direct-delivery.js";
import type { DirectDelivery } from "../../src/contract/index.js";
import { FakeClaudeSession } from "../helpers/fake-claude-hooks.js";
import { ownerHeaders } from "../helpers/http.js";
import {
  CLI,
  childEnv,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Wake-up and delivery through Claude Code's documented hooks (issue 9, item
// 3; harness spec §2.7): the generated plugin's hooks run as Claude Code runs
// them (FakeClaudeSession: payload on stdin, sh -c, timeouts, asyncRewake).
// The waiter claims messages and confirms them only once written for the
// harness (DR-0024), so each message reaches the model exactly once.

let inst: TestInstance;
let env: Record<string, string>;
let pluginRoot: string;
let sender: Peer;
const B = newSid();
const sessions: FakeClaudeSession[] = [];

beforeAll(async () => {
  inst = await startInstance();
  env = { ...inst.env };
  const installed = await runCli(
    ["plugin", "install", "claude", "--state-dir", inst.stateDir, "--json"],
    env,
  );
  expect(installed.code, installed.stderr).toBe(0);
  pluginRoot = join(inst.stateDir, "plugins", "claude");
  sender = await Peer.unix(inst.socket);
  await sender.helloSession(B, { cwd: "/tmp/b" });
});

afterEach(() => {
  for (const s of sessions.splice(0)) s.killBackground();
});

afterAll(async () => {
  sender.close();
  await inst.stop();
  expect(contractViolations).toEqual([]);
});

function session(sid = newSid()): FakeClaudeSession {
  const cwd = join(inst.stateDir, "work", sid.slice(0, 8));
  mkdirSync(cwd, { recursive: true });
  const s = FakeClaudeSession.fromPlugin(pluginRoot, sid, childEnv(env), cwd);
  sessions.push(s);
  return s;
}

async function receiver(sid: string): Promise<string | null> {
  const res = await fetch(`${inst.http}_test/inbox-receiver/${sid}`, {
    headers: ownerHeaders(inst.http),
  });
  return ((await res.json()) as { receiver: string | null }).receiver;
}

/** Wait until `sid`'s inbox receiver is `want` (a waiter armed, or none). */
async function receiverIs(sid: string, want: string | null, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await receiver(sid)) !== want) {
    if (Date.now() > deadline) throw new Error(`receiver of ${sid} never became ${want}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function post(to: string, text: string) {
  return sender.call<{ delivered: boolean; reason?: string }>("message_send", { to, text });
}

/** Every delivery in a wake's text (the messages, in order). */
function deliveries(text: string): DirectDelivery[] {
  const out: DirectDelivery[] = [];
  const close = "\n</cross-session-message>";
  let at = text.indexOf("<cross-session-message ");
  while (at >= 0) {
    const end = text.indexOf(close, at) + close.length;
    const d = parseDirectDelivery(text.slice(at, end));
    if (d !== undefined) out.push(d);
    at = text.indexOf("<cross-session-message ", end);
  }
  return out;
}

describe("ccmsg wait --hook (the waiter)", () => {
  it("wakes an idle session with the message, and the sender hears delivered", async () => {
    const a = session();
    const [hello] = await a.fire("SessionStart", { source: "startup" });
    expect(hello!.code).toBe(0);
    await receiverIs(a.payload("Stop").session_id as string, "wait");
    const sid = a.payload("Stop").session_id as string;

    expect(await post(sid, "please rebase onto main")).toEqual({ delivered: true });
    await a.waitForWakes(1);
    const [d] = deliveries(a.wakes[0]!);
    expect(d).toMatchObject({ from: B, text: "please rebase onto main" });
    expect(a.wakes[0]).toContain(`Reply with: ccmsg reply ${d!.mid} --to ${B} <text>`);
    // The waiter printed nothing on stdout and exited 2; Stop re-armed it.
    const run = a.runs.find((r) => r.code === 2)!;
    expect(run.stdout).toBe("");
    await receiverIs(sid, "wait");
  });

  it("hands 1,000 posts to the model exactly once, in order, while waiters re-arm", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    // Its harness runs throughout: between two waiters it stays live.
    const removeStateFile = a.writeStateFile(env.CLAUDE_CONFIG_DIR!);
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    const replies: { delivered: boolean; reason?: string }[] = [];
    const seen = () => a.wakes.flatMap(deliveries);
    // In bursts of 50 (well under the inbox's 256), each burst handed over
    // before the next: a wake-up or two per burst.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = burst * 50; i < (burst + 1) * 50; i++)
        replies.push(await post(sid, `task ${i}`));
      const deadline = Date.now() + 20_000;
      while (seen().length < (burst + 1) * 50 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
    }
    const texts = seen().map((d) => d.text);
    expect(texts).toEqual(Array.from({ length: 1000 }, (_, i) => `task ${i}`));
    expect(new Set(seen().map((d) => d.mid)).size).toBe(1000);
    for (const r of replies) {
      expect(r.delivered || r.reason === "preparing", JSON.stringify(r)).toBe(true);
    }
    // Some were handed over at once; several wakes carried the rest.
    expect(replies.some((r) => r.delivered)).toBe(true);
    expect(a.wakes.length).toBeGreaterThan(1);
    // Nothing stays held.
    const left = await runCli(["inbox", "--sid", sid, "--json"], env);
    expect(JSON.parse(left.stdout)).toEqual({ messages: [] });
    removeStateFile();
  }, 120_000);

  it("a waiter killed before handing over leaves the message held; the next one delivers it once", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    // Freeze the waiter, so the message reaches it but is never passed on,
    // then kill it.
    const [waiter] = [...a.background];
    process.kill(-waiter!.pid!, "SIGSTOP");
    const reply = post(sid, "do not lose me");
    await new Promise((r) => setTimeout(r, 300));
    a.killBackground();
    expect(await reply).toEqual({ delivered: false, reason: "preparing" });
    expect(a.wakes).toEqual([]);

    // The next event re-arms a waiter, which delivers it — once.
    await a.fire("Stop");
    await a.waitForWakes(1);
    expect(deliveries(a.wakes[0]!).map((d) => d.text)).toEqual(["do not lose me"]);
    await receiverIs(sid, "wait");
    await new Promise((r) => setTimeout(r, 200));
    expect(a.wakes).toHaveLength(1);
  });

  it("what a killed waiter held reaches the next prompt through inbox --hook, once", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    process.kill(-[...a.background][0]!.pid!, "SIGSTOP");
    const reply = post(sid, "for the next prompt");
    await new Promise((r) => setTimeout(r, 300));
    a.killBackground();
    expect((await reply).delivered).toBe(false);
    const [run] = await a.fire("UserPromptSubmit");
    const context = (
      JSON.parse(run!.stdout) as { hookSpecificOutput: { additionalContext: string } }
    ).hookSpecificOutput.additionalContext;
    expect(deliveries(context).map((d) => d.text)).toEqual(["for the next prompt"]);
    const [again] = await a.fire("UserPromptSubmit");
    expect(nothingAnswered(again!.stdout)).toBe(true);
  });

  it("a newer waiter supersedes the older, which exits 0 in silence", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    const first = [...a.background][0]!;
    const exited = new Promise<number | null>((r) => first.on("close", (code) => r(code)));
    await a.fire("Stop");
    expect(await exited).toBe(0);
    const run = a.runs.find((r) => r.event === "SessionStart" && r.command.includes(" 'wait' "));
    expect(run).toMatchObject({ code: 0, stdout: "", stderr: "" });
    await receiverIs(sid, "wait");
    expect(await post(sid, "to the newest")).toEqual({ delivered: true });
    await a.waitForWakes(1);
  });

  it("when the session stops, its waiter exits 0 and later messages are held for it", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    const waiter = [...a.background][0]!;
    const exited = new Promise<number | null>((r) => waiter.on("close", (code) => r(code)));
    const [stop] = await a.fire("SessionEnd", { reason: "other" });
    expect(JSON.parse(stop!.stdout)).toMatchObject({ stopped: true });
    expect(await exited).toBe(0);
    const r = await post(sid, "after the end");
    expect(r.delivered).toBe(false);
    expect(a.wakes).toEqual([]);
  });

  it("ccmsg inbox beside an armed waiter takes what is held without ending the waiter", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await a.fire("SessionStart", { source: "startup" });
    await receiverIs(sid, "wait");
    const r = await runCli(["inbox", "--sid", sid, "--json"], env);
    expect(JSON.parse(r.stdout)).toEqual({ messages: [] });
    expect(await receiver(sid)).toBe("wait");
    expect(await post(sid, "still awake")).toEqual({ delivered: true });
    await a.waitForWakes(1);
  });

  it("exits 0 in silence before its timeout", async () => {
    const sid = newSid();
    const started = Date.now();
    const r = await runCli(
      ["wait", "--hook", "--max-wait", "1", "--state-dir", inst.stateDir],
      env,
      JSON.stringify({ session_id: sid, hook_event_name: "Stop" }),
    );
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("exits when its harness process goes", async () => {
    const sid = newSid();
    // A stand-in harness that runs the waiter through a shell, then is killed.
    const harness = spawn(
      process.execPath,
      [
        "-e",
        `require("node:child_process").spawn("sh", ["-c", process.argv[1]], { stdio: ["pipe", "ignore", "ignore"] }).stdin.end(process.argv[2]); setInterval(() => {}, 1000);`,
        `'${process.execPath}' '${CLI}' wait --hook --state-dir '${inst.stateDir}'`,
        JSON.stringify({ session_id: sid, hook_event_name: "Stop" }),
      ],
      { env: childEnv(env), stdio: "ignore" },
    );
    await receiverIs(sid, "wait");
    harness.kill("SIGKILL");
    await receiverIs(sid, null, 8000);
  });
});

/** A hook that answers nothing: a command prints nothing, the http hook
 * route (DR-0058) answers `{}`. */
const nothingAnswered = (stdout: string) => stdout === "" || stdout === "{}";

describe("the prompt hook (UserPromptSubmit; the http route, or ccmsg inbox --hook)", () => {
  it("adds held messages as additionalContext and prints nothing when none is held", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    // Known to the instance (greeted once), nothing listening: posts are held.
    await runCli(["hello", "--sid", sid, "--cwd", "/tmp"], env);
    for (const t of ["one", "two", "three"]) expect((await post(sid, t)).delivered).toBe(false);
    const [run] = await a.fire("UserPromptSubmit");
    expect(run!.code).toBe(0);
    const out = JSON.parse(run!.stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string };
    };
    expect(out.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(deliveries(out.hookSpecificOutput.additionalContext).map((d) => d.text)).toEqual([
      "one",
      "two",
      "three",
    ]);
    const [again] = await a.fire("UserPromptSubmit");
    expect(again!.code).toBe(0);
    expect(nothingAnswered(again!.stdout)).toBe(true);
  });

  it("at Codex's Stop, held messages keep the turn going (decision: block)", async () => {
    const sid = newSid();
    await runCli(["hello", "--sid", sid, "--cwd", "/tmp"], env);
    await post(sid, "one more thing: update the changelog");
    const payload = JSON.parse(
      readFileSync(join(ROOT, "test", "fixtures", "codex", "hooks", "stop.json"), "utf8"),
    );
    const r = await runCli(
      ["inbox", "--hook", "--state-dir", inst.stateDir],
      env,
      JSON.stringify({ ...payload, session_id: sid }),
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { decision: string; reason: string };
    expect(out.decision).toBe("block");
    expect(deliveries(out.reason).map((d) => d.text)).toEqual([
      "one more thing: update the changelog",
    ]);
  });

  it("keeps within 10,000 characters; the rest stays held and the context says so", async () => {
    const a = session();
    const sid = a.payload("Stop").session_id as string;
    await runCli(["hello", "--sid", sid, "--cwd", "/tmp"], env);
    for (let i = 0; i < 60; i++) await post(sid, `${i} ${"z".repeat(400)}`);
    const got: string[] = [];
    for (let round = 0; round < 10 && got.length < 60; round++) {
      const [run] = await a.fire("UserPromptSubmit");
      const context = (
        JSON.parse(run!.stdout) as { hookSpecificOutput: { additionalContext: string } }
      ).hookSpecificOutput.additionalContext;
      expect(context.length).toBeLessThanOrEqual(10_000);
      const ds = deliveries(context);
      expect(ds.length).toBeGreaterThan(0);
      got.push(...ds.map((d) => d.text.split(" ")[0]!));
      if (got.length < 60) expect(context).toMatch(/\d+ more ccmsg messages? (is|are) held/);
    }
    expect(got).toEqual(Array.from({ length: 60 }, (_, i) => String(i)));
  });
});
