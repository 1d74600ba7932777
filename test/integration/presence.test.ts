import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { holdThreadLock } from "../helpers/codex-lock.js";
import { requiredPath } from "../helpers/env.js";
import {
  CLI,
  isolatedHome,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { procStartOf, writeSessionFile } from "../helpers/state-file.js";

// Issue 9, item 2: a session is live while its harness process runs, whether
// or not it holds a connection — read from Claude Code's state files
// (harness.md §5.1) and Codex's thread locks (§7.4).

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

let inst: TestInstance;
let sessionsDir: string;
beforeAll(async () => {
  inst = await startInstance();
  sessionsDir = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "sessions");
  mkdirSync(sessionsDir, { recursive: true });
});
afterAll(async () => {
  await inst.stop();
});

interface Harness {
  pid: number;
  procStart: string;
  file: string;
  /** Rewrite the state file (fields over the defaults). */
  write(fields?: Record<string, unknown>): void;
  /** SIGKILL the process (its state file stays behind, as after a crash). */
  kill(): Promise<void>;
}

/** Stands in for Claude Code: runs each command line it reads (JSON argv for
 * the CLI) as its child, as a hook runs, and prints its exit code. */
const HOOK_RUNNER = `
const { spawnSync } = require("node:child_process");
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const r = spawnSync(process.execPath, JSON.parse(line), { stdio: ["ignore", "pipe", "pipe"] });
  console.log(JSON.stringify({ code: r.status, stdout: String(r.stdout) }));
});
`;

/** A running process standing in for Claude Code, with its state file: a bare
 * `sleep`, or a hook runner (`hook` runs the CLI as its child). */
async function harness(
  sid: string,
  fields: Record<string, unknown> = {},
  runsHooks = false,
): Promise<Harness & { hook(args: string[]): Promise<{ code: number; stdout: string }> }> {
  const child = runsHooks
    ? spawn(process.execPath, ["-e", HOOK_RUNNER], {
        stdio: ["pipe", "pipe", "ignore"],
        env: { PATH: process.env.PATH, CCMSG_STATE_DIR: inst.stateDir, ...inst.env },
      })
    : spawn("sleep", ["600"], { stdio: "ignore" });
  children.add(child);
  await new Promise((r) => child.once("spawn", r));
  const pid = child.pid!;
  const procStart = await procStartOf(pid);
  const exited = new Promise((r) => child.once("exit", r));
  const file = join(sessionsDir, `${pid}.json`);
  const replies: ((line: string) => void)[] = [];
  let buf = "";
  child.stdout?.on("data", (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      replies.shift()?.(line);
    }
  });
  const h = {
    pid,
    procStart,
    file,
    write(more = {}) {
      writeSessionFile(dirname(sessionsDir), {
        pid,
        sessionId: sid,
        procStart,
        cwd: "/home/dev/widgets",
        ...fields,
        ...more,
      });
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
      children.delete(child);
    },
    hook(args: string[]): Promise<{ code: number; stdout: string }> {
      const reply = new Promise<string>((r) => replies.push(r));
      child.stdin?.write(`${JSON.stringify([CLI, ...args])}\n`);
      return reply.then((line) => JSON.parse(line) as { code: number; stdout: string });
    },
  };
  h.write();
  return h;
}

type PeerRow = { sid: string; state?: string; cwd: string; title?: string; stopped_at?: number };
type PeersData = { peers: PeerRow[]; last_live: PeerRow[] };
type AgentRow = { sid: string; pid: number; cwd: string; status?: string; waiting_for?: string };

const peersOf = (f: Pushed) => f.data as PeersData;
const liveRow = (f: Pushed, sid: string) => peersOf(f).peers.find((p) => p.sid === sid);
const lostRow = (f: Pushed, sid: string) => peersOf(f).last_live.find((p) => p.sid === sid);

async function person(): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloUser();
  return p;
}

describe("presence from Claude Code's state files", () => {
  it("a running process with no connection is live in peers and in agents; a post to it is held preparing", async () => {
    const [A, W, U] = [newSid(), newSid(), newSid()];
    const a = await harness(A, {
      messagingSocketPath: "/tmp/none.sock",
      peerProtocol: 1,
      name: "a-name",
      tmux: "cc:@0.%4",
    });
    const w = await harness(W, { status: "waiting", waitingFor: "dialog open" });
    const u = await harness(U);
    const p = await person();
    const snap = await p.subscribe("peers");
    // A messaging socket makes it reachable; a dialog makes it wait; neither
    // connection nor socket nor terminal: nothing here can act on it.
    expect(liveRow(snap, A)).toMatchObject({
      state: "live",
      cwd: "/home/dev/widgets",
      title: "a-name",
    });
    expect(liveRow(snap, W)).toMatchObject({ state: "waiting" });
    expect(liveRow(snap, U)).toMatchObject({ state: "live_unmanaged" });
    const agents = (await p.subscribe("agents")).data as { agents: AgentRow[]; polled_at: number };
    expect(agents.agents.find((r) => r.sid === A)).toMatchObject({
      pid: a.pid,
      cwd: "/home/dev/widgets",
      kind: "interactive",
      name: "a-name",
      terminal_id: "%4",
      config_dir: requiredPath(inst.env, "CLAUDE_CONFIG_DIR"),
    });
    expect(agents.agents.find((r) => r.sid === W)).toMatchObject({
      status: "waiting",
      waiting_for: "dialog open",
    });
    expect(agents.polled_at).toBeGreaterThan(0);
    for (const sid of [A, W, U])
      expect(await p.call("message_send", { to: sid, text: "hello" })).toEqual({
        delivered: false,
        reason: "preparing",
      });
    p.close();
    await Promise.all([a.kill(), w.kill(), u.kill()]);
  });

  it("the process killed: the session moves to last_live within 6 s while a peers subscriber watches", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await harness(A);
    const p = await person();
    expect(liveRow(await p.subscribe("peers"), A)).toBeDefined();
    // Once B is seen the watch is armed and past its first pass: what follows
    // is the confirmation poll's to find (a killed process leaves its file).
    const b = await harness(B);
    await p.next((f) => f.topic === "peers" && liveRow(f, B) !== undefined);
    await a.kill();
    const lost = await p.next((f) => f.topic === "peers" && lostRow(f, A) !== undefined, 6000);
    expect(lostRow(lost, A)).toMatchObject({ state: "disappeared", cwd: "/home/dev/widgets" });
    expect(liveRow(lost, A)).toBeUndefined();
    p.close();
    await b.kill();
  });

  it("without subscribers a send reads fresh: a running one is found, an ended one has disappeared", async () => {
    const A = newSid();
    const a = await harness(A);
    const p = await person();
    expect(await p.call("message_send", { to: A, text: "one" })).toMatchObject({
      reason: "preparing",
    });
    await a.kill();
    expect(await p.call("message_send", { to: A, text: "two" })).toMatchObject({
      delivered: false,
      reason: "disappeared",
    });
    p.close();
  });

  it("a reused pid is not the session: a live pid whose start time differs names nobody", async () => {
    const A = newSid();
    const a = await harness(A, {});
    a.write({ procStart: String(Number(a.procStart) + 1) });
    const p = await person();
    const snap = await p.subscribe("peers");
    expect(liveRow(snap, A)).toBeUndefined();
    const r = await p.request("message_send", { to: A, text: "x" });
    expect(r.error?.code).toBe("session_not_found");
    const agents = (await p.subscribe("agents")).data as { agents: AgentRow[] };
    expect(agents.agents.some((x) => x.sid === A)).toBe(false);
    p.close();
    await a.kill();
  });

  it("a half-written rewrite keeps the row: no peers frame goes without it", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await harness(A);
    const p = await person();
    expect(liveRow(await p.subscribe("peers"), A)).toBeDefined();
    writeFileSync(a.file, `{"pid": ${a.pid}, "sessionId": "${A}", "cw`);
    // A fresh read has certainly seen the torn file once this answers.
    expect(await p.call("message_send", { to: A, text: "x" })).toMatchObject({
      reason: "preparing",
    });
    writeFileSync(a.file, "");
    expect(await p.call("message_send", { to: A, text: "y" })).toMatchObject({
      reason: "preparing",
    });
    // A visible change after the torn reads: every frame up to it kept A.
    const b = await harness(B);
    await p.next((f) => f.topic === "peers" && liveRow(f, B) !== undefined);
    const frames = p.frames.filter((f) => f.topic === "peers");
    expect(frames.every((f) => liveRow(f, A) !== undefined)).toBe(true);
    p.close();
    await Promise.all([a.kill(), b.kill()]);
  });

  it("declared stopping, its hook's connection gone, then the process ends: paused", async () => {
    const A = newSid();
    const a = await harness(A, {}, true);
    // The SessionEnd hook, run by the harness: connects, declares, leaves;
    // the process ends later.
    const hook = await a.hook(["stopping", "--sid", A, "--json"]);
    expect(hook.code).toBe(0);
    const { stopped_at } = JSON.parse(hook.stdout) as { stopped_at: number };
    expect(stopped_at).toBeGreaterThan(0);
    const p = await person();
    const snap = await p.subscribe("peers");
    expect(liveRow(snap, A)).toBeDefined();
    await a.kill();
    const lost = await p.next((f) => f.topic === "peers" && lostRow(f, A) !== undefined, 6000);
    expect(lostRow(lost, A)).toMatchObject({ state: "paused", stopped_at });
    expect(await p.call("message_send", { to: A, text: "x" })).toMatchObject({ reason: "paused" });
    p.close();
  });

  it("a session stays live when its last connection closes while its process runs", async () => {
    const A = newSid();
    const a = await harness(A);
    const s = await Peer.unix(inst.socket);
    await s.helloSession(A, { repo: "widgets", ws: "board" });
    s.close();
    await s.closed();
    const p = await person();
    const row = liveRow(await p.subscribe("peers"), A);
    // What it stated in its greeting stays on the row.
    expect(row).toMatchObject({ state: "live_unmanaged", repo: "widgets", ws: "board" });
    p.close();
    await a.kill();
  });

  it("a session lost without a process comes back live once its process is found", async () => {
    const A = newSid();
    const s = await Peer.unix(inst.socket);
    await s.helloSession(A);
    s.close();
    await s.closed();
    const p = await person();
    expect(await p.call("message_send", { to: A, text: "x" })).toMatchObject({
      reason: "disappeared",
    });
    const a = await harness(A);
    const snap = await p.subscribe("peers");
    expect(liveRow(snap, A)).toBeDefined();
    expect(lostRow(snap, A)).toBeUndefined();
    // Watching now: the file's removal (a clean exit) is seen at once.
    unlinkSync(a.file);
    await p.next((f) => f.topic === "peers" && lostRow(f, A) !== undefined, 6000);
    p.close();
    await a.kill();
  });

  it("agents is a person's topic; ccmsg agents lists the running sessions", async () => {
    const A = newSid();
    const a = await harness(A, { name: "lister" });
    const s = await Peer.unix(inst.socket);
    await s.helloSession(newSid());
    const r = await s.request("topic_subscribe", { topic: "agents" });
    expect(r.error?.code).toBe("forbidden");
    s.close();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir, CLAUDE_CODE_SESSION_ID: newSid() };
    const json = await runCli(["agents", "--json"], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).agents).toContainEqual(
      expect.objectContaining({ sid: A, pid: a.pid, name: "lister" }),
    );
    const text = await runCli(["agents", "--text"], env);
    expect(text.stdout).toContain(A.slice(0, 8));
    expect(text.stdout).toContain("lister");
    await a.kill();
  });
});

describe("presence from Codex's thread locks", () => {
  it("a held thread lock is a live_unmanaged session in peers, and no agents row", async () => {
    const { env } = isolatedHome();
    const codexHome = join(requiredPath(env, "HOME"), ".codex");
    const locks = join(codexHome, "thread-writer-locks");
    mkdirSync(locks, { recursive: true });
    const thread = newSid();
    const codexInst = await startInstance({
      env: { ...env, CODEX_HOME: codexHome, CODEX_THREAD_ID: thread },
    });
    const lock = join(locks, `${thread}.lock`);
    writeFileSync(lock, "");
    const { release } = await holdThreadLock(codexHome, thread);
    const p = await Peer.unix(codexInst.socket);
    await p.helloUser();
    expect(liveRow(await p.subscribe("peers"), thread)).toMatchObject({ state: "live_unmanaged" });
    expect(((await p.subscribe("agents")).data as { agents: unknown[] }).agents).toEqual([]);
    // The lock let go (the thread ended): the next read loses it.
    release();
    const lost = await p.next((f) => f.topic === "peers" && lostRow(f, thread) !== undefined, 6000);
    expect(lostRow(lost, thread)).toMatchObject({ state: "disappeared" });
    p.close();
    await codexInst.stop();
  });
});
