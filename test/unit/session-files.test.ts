import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  findSessionFile,
  harnessProcessOf,
  MAX_SESSION_FILE_BYTES,
  parseSessionFile,
  rowsBySession,
  SessionFiles,
  tmuxNamespace,
  tmuxPane,
} from "../../src/harness/claude/session-files.js";
import { readThreadLocks } from "../../src/harness/codex/thread-locks.js";
import { freshReads } from "../../src/harness/fresh-read.js";
import { processStatus } from "../../src/probes/process.js";
import { holdThreadLock } from "../helpers/codex-lock.js";
import { ROOT } from "../helpers/instance.js";
import { newSid } from "../helpers/peer.js";

// The reader of Claude Code's state files (harness.md §5.1) and of Codex's
// thread locks (§7.4), against copies of the real shapes.

const FIXTURES = join(ROOT, "test", "fixtures");
const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-sf-"));
  dirs.push(d);
  return d;
}

/** A live process standing in for a Claude Code process. */
async function liveProcess(): Promise<{ pid: number; procStart: string; kill(): Promise<void> }> {
  const child = spawn("sleep", ["600"], { stdio: "ignore" });
  children.add(child);
  await new Promise((r) => child.once("spawn", r));
  const pid = child.pid!;
  const status = await processStatus(pid);
  if (!status.alive || status.start === undefined) throw new Error("no /proc start time");
  const exited = new Promise((r) => child.once("exit", r));
  return {
    pid,
    procStart: status.start,
    async kill() {
      child.kill("SIGKILL");
      await exited;
      children.delete(child);
    },
  };
}

/** A config home with the fixture state files copied in. */
function configHome(): string {
  const home = tempDir();
  cpSync(join(FIXTURES, "claude-code", "config-home"), home, { recursive: true });
  return home;
}

function writeState(home: string, pid: number, fields: Record<string, unknown>): string {
  const path = join(home, "sessions", `${pid}.json`);
  writeFileSync(path, JSON.stringify({ pid, kind: "interactive", ...fields }));
  return path;
}

describe("parseSessionFile", () => {
  const fixture = (name: string) =>
    readFileSync(join(FIXTURES, "claude-code", "config-home", "sessions", name), "utf8");

  it("reads the fixture's complete files and calls the half-written one incomplete", () => {
    expect(parseSessionFile(fixture("48213.json"), 48213)).toEqual({
      kind: "row",
      row: {
        pid: 48213,
        sessionId: "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d",
        cwd: "/home/dev/widgets",
        kind: "interactive",
        startedAt: 1796023200000,
        status: "idle",
        messagingSocketPath: "/tmp/claude-1000/messaging/48213.sock",
        peerProtocol: 1,
      },
    });
    expect(parseSessionFile(fixture("51877.json"), 51877)).toMatchObject({
      kind: "row",
      row: { status: "busy", waitingFor: "permission" },
    });
    expect(parseSessionFile(fixture("60001.json"), 60001)).toEqual({ kind: "incomplete" });
    expect(parseSessionFile("", 1)).toEqual({ kind: "incomplete" });
  });

  it("reads the shape Claude Code 2.1.328 writes (waitingFor, procStart, tmux, name)", () => {
    const text = JSON.stringify({
      pid: 31270,
      sessionId: "0f0e0d0c-0b0a-4908-8706-050403020100",
      cwd: "/w",
      startedAt: 1,
      procStart: "1095358",
      version: "2.1.328",
      peerProtocol: 1,
      peerFeatures: ["notify_idle"],
      kind: "interactive",
      entrypoint: "cli",
      tmux: "cc:@0.%0",
      messagingSocketPath: "/tmp/cc-socks/31270.sock",
      name: "work2-b6",
      nameSource: "derived",
      status: "waiting",
      waitingFor: "dialog open",
      updatedAt: 5,
    });
    expect(parseSessionFile(text, 31270)).toMatchObject({
      kind: "row",
      row: {
        procStart: "1095358",
        tmux: "cc:@0.%0",
        name: "work2-b6",
        status: "waiting",
        waitingFor: "dialog open",
        updatedAt: 5,
      },
    });
  });

  it("a complete file that is no session's state names nobody", () => {
    expect(parseSessionFile('{"pid":7}', 7)).toEqual({ kind: "other" });
    expect(parseSessionFile('{"pid":8,"sessionId":"x"}', 7)).toEqual({ kind: "other" });
    expect(parseSessionFile("[1]", 7)).toEqual({ kind: "other" });
  });

  it("terminal handles: the tmux pane, and the namespace of a non-default socket", () => {
    expect(tmuxPane("cc:@0.%0")).toBe("%0");
    expect(tmuxPane("weird")).toBeUndefined();
    expect(tmuxNamespace("/tmp/tmux-1000/work")).toBe("work");
    expect(tmuxNamespace("/tmp/tmux-1000/default")).toBeUndefined();
  });
});

describe("SessionFiles", () => {
  it("keeps rows of running processes only; the fixture's pids are not running here", async () => {
    const home = configHome();
    const p = await liveProcess();
    const sid = newSid();
    writeState(home, p.pid, { sessionId: sid, cwd: "/w", procStart: p.procStart });
    const read = await new SessionFiles(home).fresh();
    expect(read.ok && read.rows.map((r) => r.sessionId)).toEqual([sid]);
    await p.kill();
    const after = await new SessionFiles(home).fresh();
    expect(after.ok && after.rows).toEqual([]);
  });

  it("a half-written or empty rewrite keeps the last complete row; the file's removal drops it", async () => {
    const home = configHome();
    const p = await liveProcess();
    const sid = newSid();
    const reader = new SessionFiles(home);
    const path = writeState(home, p.pid, { sessionId: sid, name: "first", procStart: p.procStart });
    const rowOf = async () => {
      const read = await reader.fresh();
      return read.ok ? read.rows.find((r) => r.sessionId === sid) : undefined;
    };
    expect(await rowOf()).toMatchObject({ name: "first" });
    writeFileSync(path, `{"pid": ${p.pid}, "sessionId": "${sid}", "na`);
    expect(await rowOf()).toMatchObject({ name: "first" });
    writeFileSync(path, "");
    expect(await rowOf()).toMatchObject({ name: "first" });
    writeState(home, p.pid, { sessionId: sid, name: "second", procStart: p.procStart });
    expect(await rowOf()).toMatchObject({ name: "second" });
    unlinkSync(path);
    expect(await rowOf()).toBeUndefined();
    await p.kill();
  });

  it("a reused pid is not the session: procStart differs, or it started after the session", async () => {
    const home = configHome();
    const p = await liveProcess();
    const q = await liveProcess();
    writeState(home, p.pid, { sessionId: newSid(), procStart: String(Number(p.procStart) - 1) });
    // Without procStart the session's start decides: this process started
    // long after the session did.
    writeState(home, q.pid, { sessionId: newSid(), startedAt: Date.now() - 3_600_000 });
    const read = await new SessionFiles(home).fresh();
    expect(read.ok && read.rows).toEqual([]);
    writeState(home, q.pid, { sessionId: newSid(), startedAt: Date.now() });
    const again = await new SessionFiles(home).fresh();
    expect(again.ok && again.rows.map((r) => r.pid)).toEqual([q.pid]);
    await p.kill();
    await q.kill();
  });

  it("confirm(): a known row whose process ended goes; the directory is not read for it", async () => {
    const home = configHome();
    const [p, q] = [await liveProcess(), await liveProcess()];
    const reader = new SessionFiles(home);
    const sid = newSid();
    writeState(home, p.pid, { sessionId: sid, procStart: p.procStart });
    expect((await reader.fresh()).ok).toBe(true);
    writeState(home, q.pid, { sessionId: newSid(), procStart: q.procStart });
    await p.kill();
    const confirmed = await reader.confirm();
    expect(confirmed.ok && confirmed.rows).toEqual([]);
    const fresh = await reader.fresh();
    expect(fresh.ok && fresh.rows.map((r) => r.pid)).toEqual([q.pid]);
    await q.kill();
  });

  it("is bounded: a file larger than the limit is not read", async () => {
    const home = configHome();
    const p = await liveProcess();
    writeState(home, p.pid, {
      sessionId: newSid(),
      procStart: p.procStart,
      pad: "x".repeat(MAX_SESSION_FILE_BYTES),
    });
    const read = await new SessionFiles(home).fresh();
    expect(read.ok && read.rows).toEqual([]);
    await p.kill();
  });

  it("a missing directory holds no session; a file where the directory should be is none either", async () => {
    const home = tempDir();
    expect(await new SessionFiles(home).fresh()).toMatchObject({ ok: true, rows: [] });
    writeFileSync(join(home, "sessions"), "");
    expect(await new SessionFiles(home).fresh()).toMatchObject({ ok: true, rows: [] });
  });

  it("findSessionFile answers from a fresh read, with the delivery fields; harnessProcessOf on top", async () => {
    const home = configHome();
    const p = await liveProcess();
    const sid = newSid();
    expect(await findSessionFile(home, sid)).toBeUndefined();
    writeState(home, p.pid, {
      sessionId: sid,
      procStart: p.procStart,
      messagingSocketPath: "/tmp/x.sock",
      peerProtocol: 1,
    });
    expect(await findSessionFile(home, sid)).toMatchObject({
      pid: p.pid,
      messagingSocketPath: "/tmp/x.sock",
      peerProtocol: 1,
      path: join(home, "sessions", `${p.pid}.json`),
    });
    expect(await harnessProcessOf(home, sid)).toEqual({ pid: p.pid });
    await p.kill();
    expect(await findSessionFile(home, sid)).toBeUndefined();
  });

  it("when two files name one session, the interactive, most recently updated one speaks", () => {
    const sid = newSid();
    const base = { sessionId: sid, path: "" };
    const rows = rowsBySession([
      { ...base, pid: 1, kind: "bg", updatedAt: 9 },
      { ...base, pid: 2, kind: "interactive", updatedAt: 1 },
      { ...base, pid: 3, kind: "interactive", updatedAt: 5 },
    ]);
    expect(rows.get(sid)?.pid).toBe(3);
  });
});

describe("freshReads", () => {
  it("a caller gets a read that started after it asked; callers during a read share the next", async () => {
    let started = 0;
    const gates: (() => void)[] = [];
    const fresh = freshReads(async () => {
      const n = ++started;
      await new Promise<void>((r) => gates.push(r));
      return n;
    });
    const a = fresh();
    const b = fresh();
    const c = fresh();
    expect(started).toBe(1);
    gates.shift()!();
    expect(await a).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toBe(2);
    gates.shift()!();
    expect([await b, await c]).toEqual([2, 2]);
  });
});

describe("Codex thread locks", () => {
  it("a lock Codex holds (flock) is a running thread; one left behind is not; other files are ignored", async () => {
    const home = tempDir();
    cpSync(join(FIXTURES, "codex", "codex-home"), home, { recursive: true });
    const dir = join(home, "thread-writer-locks");
    writeFileSync(join(dir, ".coordination.lock"), "");
    const held = newSid();
    writeFileSync(join(dir, `${held}.lock`), "");
    // Left behind (the fixture's lock): nobody holds it.
    expect(await readThreadLocks(home)).toMatchObject({ ok: true, threads: [] });
    const { release } = await holdThreadLock(home, held);
    const read = await readThreadLocks(home);
    expect(read).toMatchObject({ ok: true, threads: [held] });
    release();
  });

  it("no lock directory: no threads", async () => {
    const home = tempDir();
    mkdirSync(join(home, "sessions"));
    expect(await readThreadLocks(home)).toMatchObject({ ok: true, threads: [] });
  });
});
