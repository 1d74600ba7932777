import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./instance.js";

// Runs a plugin's hooks the way Claude Code does (harness spec §2.1–§2.7):
// each command through `sh -c`, the event's payload (copied from the real
// fixtures) as JSON on stdin, the plugin root in CLAUDE_PLUGIN_ROOT, killed
// at its timeout. Sync hooks are awaited; `async` hooks run in the
// background, and an `asyncRewake` hook that exits 2 wakes the session with
// its stderr: recorded here as a turn, after which Stop fires again — which
// re-arms the waiter, as in Claude Code. An `http` hook is POSTed its payload
// and its answer read as a command's stdout; a refused connection, a non-2xx
// answer or the timeout is a non-blocking error (DR-0058). What cannot run here is the model;
// the turn itself is this class's bookkeeping.

const FIXTURES = join(ROOT, "test", "fixtures", "claude-code", "hooks");

interface Handler {
  type: string;
  command: string;
  /** `type: "http"`: where the payload is POSTed, with these headers. */
  url?: string;
  headers?: Record<string, string>;
  timeout?: number;
  async?: boolean;
  asyncRewake?: boolean;
}
type HooksFile = { hooks: Record<string, { matcher?: string; hooks: Handler[] }[]> };

export interface HookRun {
  event: string;
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export class FakeClaudeSession {
  /** Every hook run that finished, in order. */
  readonly runs: HookRun[] = [];
  /** Wake-ups: the stderr of each asyncRewake hook that exited 2. */
  readonly wakes: string[] = [];
  /** Background hooks still running. */
  readonly background = new Set<ChildProcess>();
  private wakeListeners: (() => void)[] = [];
  private ended = false;

  constructor(
    private readonly hooks: HooksFile,
    private readonly sid: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd: string,
    private readonly pluginRoot: string,
  ) {}

  static fromPlugin(
    pluginRoot: string,
    sid: string,
    env: NodeJS.ProcessEnv,
    cwd: string,
  ): FakeClaudeSession {
    const hooks = JSON.parse(readFileSync(join(pluginRoot, "hooks", "hooks.json"), "utf8"));
    return new FakeClaudeSession(hooks as HooksFile, sid, env, cwd, pluginRoot);
  }

  /** The payload of `event` as Claude Code sends it, for this session. */
  payload(event: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const file = {
      SessionStart: "session-start.json",
      UserPromptSubmit: "user-prompt-submit.json",
      Stop: "stop.json",
      SessionEnd: "session-end.json",
    }[event];
    const base = file ? JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) : {};
    return {
      ...base,
      session_id: this.sid,
      cwd: this.cwd,
      transcript_path: join(this.cwd, `${this.sid}.jsonl`),
      hook_event_name: event,
      ...extra,
    };
  }

  /** Fire an event: sync hooks complete before this resolves (with their
   * runs); background hooks are started. */
  async fire(event: string, extra: Record<string, unknown> = {}): Promise<HookRun[]> {
    const payload = this.payload(event, extra);
    const groups = this.hooks.hooks[event] ?? [];
    const sync: Promise<HookRun>[] = [];
    for (const group of groups) {
      if (group.matcher && event === "SessionStart") {
        if (!new RegExp(`^(?:${group.matcher})$`).test(String(payload.source ?? ""))) continue;
      }
      for (const h of group.hooks) {
        if (h.type === "http") {
          sync.push(this.post(event, h, payload));
          continue;
        }
        if (h.type !== "command") continue;
        const run = this.run(event, h, payload);
        if (h.async || h.asyncRewake) {
          void run.then((r) => {
            if (h.asyncRewake && r.code === 2 && !this.ended) this.wake(r.stderr);
          });
        } else sync.push(run);
      }
    }
    return Promise.all(sync);
  }

  /** A rewake: the model gets `stderr` as a new turn; when the turn ends,
   * Stop fires (re-arming the waiter). */
  private wake(stderr: string): void {
    this.wakes.push(stderr);
    for (const l of this.wakeListeners) l();
    void this.fire("Stop", { stop_hook_active: false });
  }

  /**
   * Claude Code's state file for this session (harness spec §5.1), naming
   * this test process as the harness: it lives, and the hooks run below it,
   * as they run below Claude Code. One per test process at a time.
   */
  writeStateFile(configDir: string): () => void {
    const dir = join(configDir, "sessions");
    mkdirSync(dir, { recursive: true });
    const stat = readFileSync("/proc/self/stat", "utf8");
    const procStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    const path = join(dir, `${process.pid}.json`);
    const row = {
      pid: process.pid,
      sessionId: this.sid,
      cwd: this.cwd,
      startedAt: Date.now(),
      procStart,
      kind: "interactive",
      entrypoint: "cli",
      status: "idle",
    };
    writeFileSync(path, JSON.stringify(row));
    return () => rmSync(path, { force: true });
  }

  /** Resolves once `n` wakes happened in all. */
  waitForWakes(n: number, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.wakes.length} of ${n} wakes`)),
        timeoutMs,
      );
      const check = () => {
        if (this.wakes.length >= n) {
          clearTimeout(timer);
          this.wakeListeners = this.wakeListeners.filter((l) => l !== check);
          resolve();
        }
      };
      this.wakeListeners.push(check);
      check();
    });
  }

  /** SessionEnd, then the process is gone: background hooks die with it. */
  async end(): Promise<void> {
    await this.fire("SessionEnd", { reason: "other" });
    this.ended = true;
    this.killBackground();
  }

  /** `kill -9` every background hook (shell and command alike). */
  killBackground(): void {
    for (const c of this.background) killGroup(c);
  }

  private async post(
    event: string,
    h: Handler,
    payload: Record<string, unknown>,
  ): Promise<HookRun> {
    const r: HookRun = { event, command: h.url!, code: 0, signal: null, stdout: "", stderr: "" };
    try {
      const res = await fetch(h.url!, {
        method: "POST",
        headers: { ...h.headers, "content-type": "application/json" },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout((h.timeout ?? 600) * 1000),
      });
      r.stdout = await res.text();
      if (!res.ok) Object.assign(r, { code: 1, stderr: `HTTP ${res.status}` });
    } catch (error) {
      Object.assign(r, { code: 1, stderr: String(error) });
    }
    this.runs.push(r);
    return r;
  }

  private run(event: string, h: Handler, payload: Record<string, unknown>): Promise<HookRun> {
    return new Promise((resolve) => {
      const child = spawn("sh", ["-c", h.command], {
        env: { ...this.env, CLAUDE_PLUGIN_ROOT: this.pluginRoot, CLAUDE_PROJECT_DIR: this.cwd },
        cwd: this.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so killing a hook kills the shell and
        // what it runs, as a harness tearing down does.
        detached: true,
      });
      if (h.async || h.asyncRewake) this.background.add(child);
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
      const timer = setTimeout(() => killGroup(child), (h.timeout ?? 600) * 1000);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.background.delete(child);
        const r = { event, command: h.command, code, signal, stdout, stderr };
        this.runs.push(r);
        resolve(r);
      });
    });
  }
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // Already gone.
  }
}
