import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { processStart, processStatus } from "../probes/process.js";
import { findSessionFile, type LiveSessionFile } from "./claude/session-files.js";
import { flockHolders, lockId } from "./codex/thread-locks.js";

// The harness process behind a session, found when something is about to act
// on it (signal it, read its environment) — never cached, never taken from a
// caller. A process is the session's only when that can be proven: Claude
// Code's state file records when its process started (harness.md §5.1), and a
// Codex thread's process is the one holding its lock file open now (§7.4). A
// pid that may have been reused by another process is never acted on.

export type Harness = "claude" | "codex";

/** A running process proven to be a session's harness. */
export interface HarnessProcess {
  pid: number;
  /** Its kernel start time (clock ticks since boot) when it was proven: the
   * same pid with another start is another process. */
  start: string;
  /** The Claude Code state file it was found through. */
  row?: LiveSessionFile;
}

export type HarnessProcessLookup =
  | { found: true; process: HarnessProcess }
  /** `why` is a sentence for a person: what was looked at and what was missing. */
  | { found: false; why: string };

/** How far a process's start may precede the session start its state file
 * records (`startedAt` is written once the process is up) or follow it
 * (clock granularity), when the file carries no `procStart` (harness.md §5.1). */
const STARTED_BEFORE_MS = 120_000;
const STARTED_AFTER_MS = 5000;

/** The harness process of session `sid` in config home `home`, proven. */
export async function findHarnessProcess(
  harness: Harness,
  home: string,
  sid: string,
): Promise<HarnessProcessLookup> {
  return harness === "claude" ? claudeProcess(home, sid) : codexProcess(home, sid);
}

async function claudeProcess(home: string, sid: string): Promise<HarnessProcessLookup> {
  const row = await findSessionFile(home, sid);
  if (row === undefined)
    return {
      found: false,
      why: `no running Claude Code process of session ${sid}: no state file in ${join(home, "sessions")} names a process of it that still runs`,
    };
  const now = await processStatus(row.pid);
  if (!now.alive) return { found: false, why: `the process of session ${sid} (${row.pid}) ended` };
  if (now.start === undefined)
    return {
      found: false,
      why: `the start time of process ${row.pid} cannot be read (no /proc), so a reused pid cannot be ruled out`,
    };
  const reused = `process ${row.pid} is not the one that wrote session ${sid}'s state file (the pid was reused)`;
  if (row.procStart !== undefined) {
    if (row.procStart !== now.start) return { found: false, why: reused };
  } else if (row.startedAt !== undefined && now.startedAt !== undefined) {
    const after = now.startedAt - row.startedAt;
    if (after < -STARTED_BEFORE_MS || after > STARTED_AFTER_MS)
      return { found: false, why: reused };
  } else {
    return {
      found: false,
      why: `session ${sid}'s state file records no start time for process ${row.pid}, so a reused pid cannot be ruled out`,
    };
  }
  return { found: true, process: { pid: row.pid, start: now.start, row } };
}

/** `<CODEX_HOME>/thread-writer-locks/<thread>.lock`. */
export function threadLockPath(codexHome: string, thread: string): string {
  return join(codexHome, "thread-writer-locks", `${thread}.lock`);
}

async function codexProcess(home: string, sid: string): Promise<HarnessProcessLookup> {
  const lock = threadLockPath(home, sid);
  const file = await stat(lock).catch(() => undefined);
  if (file === undefined)
    return { found: false, why: `Codex thread ${sid} does not run: it holds no lock in ${home}` };
  const holders = await flockHolders();
  if (holders === undefined)
    return {
      found: false,
      why: `the process of Codex thread ${sid} cannot be found: its lock names no pid and /proc/locks cannot be read`,
    };
  const pids = holders.get(lockId(file.dev, file.ino)) ?? [];
  if (pids.length === 0)
    return {
      found: false,
      why: `Codex thread ${sid} does not run: nobody holds its lock (left behind)`,
    };
  for (const pid of pids) {
    const start = await processStart(pid);
    if (start === undefined) continue;
    // The lock names who took it; that this pid holds the file open now, with
    // the same start before and after looking, proves it is still that process.
    if (!(await holdsOpen(pid, file.dev, file.ino))) continue;
    if ((await processStart(pid)) === start) return { found: true, process: { pid, start } };
  }
  return {
    found: false,
    why: `the process holding Codex thread ${sid}'s lock cannot be found (pid ${pids.join(", ")} no longer has it open)`,
  };
}

/** Whether process `pid` has the file (device, inode) open. */
async function holdsOpen(pid: number, dev: number, ino: number): Promise<boolean> {
  const dir = `/proc/${pid}/fd`;
  let fds: string[];
  try {
    fds = await readdir(dir);
  } catch {
    return false;
  }
  for (const fd of fds) {
    const st = await stat(join(dir, fd)).catch(() => undefined);
    if (st !== undefined && st.ino === ino && st.dev === dev) return true;
  }
  return false;
}

/** Whether the proven process has ended (its pid is free or names another). */
export async function hasEnded(p: HarnessProcess): Promise<boolean> {
  const now = await processStatus(p.pid);
  return !now.alive || (now.start !== undefined && now.start !== p.start);
}

/** Signal the proven process — unless its pid now names another process, or
 * nothing: then it has ended and nothing is sent. Whether it was sent. */
export async function signalProcess(p: HarnessProcess, signal: NodeJS.Signals): Promise<boolean> {
  if ((await processStart(p.pid)) !== p.start) return false;
  try {
    process.kill(p.pid, signal);
    return true;
  } catch {
    // ESRCH: it ended between the check and the signal.
    return false;
  }
}

/** The grace periods of a stop (contract §4.3.3 `session_kill`). */
export interface StopTimings {
  /** After SIGINT (the harness's own interrupt: it ends its turn and exits). */
  interruptMs: number;
  /** After SIGTERM. */
  terminateMs: number;
  /** After SIGKILL (only with `force`). */
  killMs: number;
  /** How often to look whether it is gone. */
  pollMs: number;
}

export const STOP_TIMINGS: StopTimings = {
  interruptMs: 3000,
  terminateMs: 2000,
  killMs: 1000,
  pollMs: 25,
};

/**
 * Stop the proven process: SIGINT, then SIGTERM when it is still there after
 * the interrupt's grace; SIGKILL after the terminate's grace only when
 * `force` — never on its own. Resolves with whether it was seen gone, and the
 * signals sent. Every step waits on timers: nothing blocks.
 */
export async function stopProcess(
  p: HarnessProcess,
  force: boolean,
  timings: StopTimings = STOP_TIMINGS,
): Promise<{ terminated: boolean; signals: NodeJS.Signals[] }> {
  const signals: NodeJS.Signals[] = [];
  const ladder: [NodeJS.Signals, number][] = [
    ["SIGINT", timings.interruptMs],
    ["SIGTERM", timings.terminateMs],
  ];
  if (force) ladder.push(["SIGKILL", timings.killMs]);
  for (const [signal, graceMs] of ladder) {
    if (!(await signalProcess(p, signal))) return { terminated: true, signals };
    signals.push(signal);
    if (await goneWithin(p, graceMs, timings.pollMs)) return { terminated: true, signals };
  }
  return { terminated: false, signals };
}

async function goneWithin(p: HarnessProcess, ms: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await hasEnded(p)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, deadline - Date.now()))));
  }
}

/** The most of an environment read: a reply must fit one frame (1 MiB). */
export const MAX_ENVIRON_BYTES = 512 * 1024;

/**
 * The environment the proven process was started with (/proc/<pid>/environ),
 * verbatim; undefined when it ended or its pid was reused meanwhile (checked
 * after the read, so the environment returned is the session's).
 * "too large" when it does not fit MAX_ENVIRON_BYTES.
 */
export async function readEnvironment(
  p: HarnessProcess,
): Promise<Record<string, string> | "too large" | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    handle = await open(`/proc/${p.pid}/environ`, "r");
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      length += bytesRead;
      if (length > MAX_ENVIRON_BYTES) return "too large";
    }
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
  if (await hasEnded(p)) return undefined;
  const env: Record<string, string> = {};
  for (const entry of Buffer.concat(chunks, length).toString("utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}
