import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { resolveStateDir } from "../../src/state/paths.js";
import { afterEachFile } from "./after-file.js";
import { requiredPath } from "./env.js";
import { ownerHeaders, rememberOwner } from "./http.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLI = join(ROOT, "dist", "bin", "ccmsg.js");

const live = new Set<ChildProcess>();
const dirs = new Set<string>();

// Nothing a test started may outlive it (the scenarios' reaper rule).
// A killed instance (or a command it started) may still be writing to its
// dir for a moment: the removal waits for the exits and retries. The dirs
// are forgotten first, so a failure here is this file's, not the next one's.
afterEachFile(async () => {
  const exits = [...live].map((child) => new Promise((r) => child.once("exit", r)));
  for (const child of live) child.kill("SIGKILL");
  await Promise.all(exits);
  const removing = [...dirs];
  dirs.clear();
  for (const dir of removing)
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** A temp home with its own HOME / XDG dirs, so nothing outside is touched. */
export function isolatedHome(): { root: string; env: Record<string, string> } {
  const root = mkdtempSync(join(tmpdir(), "ccmsg-t-"));
  dirs.add(root);
  const env: Record<string, string> = {
    HOME: join(root, "home"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_STATE_HOME: join(root, "state"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_RUNTIME_DIR: join(root, "run"),
    CLAUDE_CONFIG_DIR: join(root, "claude"),
  };
  for (const d of Object.values(env)) mkdirSync(d, { recursive: true, mode: 0o700 });
  return { root, env };
}

/** Where the CLI run with `env` finds its instance by default (one per config
 * home: paths.ts). */
export function defaultStateDir(env: Record<string, string | undefined>): string {
  requiredPath(env, "XDG_STATE_HOME");
  return resolveStateDir(undefined, env);
}

/** The environment a child gets: this process's PATH and node, plus `extra`,
 * with every harness identity variable removed unless given. */
export function childEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export interface TestInstance {
  stateDir: string;
  socket: string;
  /** e.g. `http://127.0.0.1:41233/` */
  http: string;
  pid: number;
  id: string;
  env: Record<string, string>;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Graceful stop by SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Move the instance clock forward (test hook); resolves with the
   * instance's time after the move. */
  advanceClock(ms: number): Promise<number>;
  /** Wait for the startup compaction; the rows it removed (test hook). */
  compacted(): Promise<number>;
  /** Lines of daemon.log so far. */
  log(): Record<string, unknown>[];
}

/** Start `ccmsg daemon run` in a temp state dir and wait for its `started`
 * line — an event, never a fixed sleep. */
export async function startInstance(
  options: {
    stateDir?: string;
    env?: Record<string, string>;
    args?: string[];
    /** A command the instance runs under, e.g. `["ip", "netns", "exec", ns]`
     * (it must exec node in place, so the child's pid is the instance's). */
    wrap?: string[];
  } = {},
): Promise<TestInstance> {
  const home = options.env === undefined ? isolatedHome() : undefined;
  const env = options.env ?? home!.env;
  const stateDir = options.stateDir ?? defaultStateDir(env);
  const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
  const child = spawn(
    command!,
    [
      ...prefix,
      CLI,
      "daemon",
      "run",
      "--state-dir",
      stateDir,
      "--http",
      "127.0.0.1:0",
      "--test-hooks",
      ...(options.args ?? []),
    ],
    { env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] },
  );
  live.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => {
      live.delete(child);
      resolve(code);
    });
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let out = "";
    const onData = (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) {
        child.stdout!.off("data", onData);
        resolve(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
      }
    };
    child.stdout!.on("data", onData);
    void exited.then((code) =>
      reject(new Error(`instance exited (${code}) before starting: ${stderr}`)),
    );
  });
  const http = started.http as string;
  if (http !== null)
    rememberOwner(http, readFileSync(join(stateDir, "owner.secret"), "utf8").trim());
  return {
    stateDir,
    socket: started.socket as string,
    http,
    pid: started.pid as number,
    id: started.instance as string,
    env,
    child,
    exited,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async advanceClock(ms: number) {
      const res = await fetch(`${http}_test/clock`, {
        method: "POST",
        headers: { ...ownerHeaders(http), "content-type": "application/json" },
        body: JSON.stringify({ advance_ms: ms }),
      });
      if (!res.ok) throw new Error(`clock hook failed: ${res.status}`);
      return ((await res.json()) as { now: number }).now;
    },
    async compacted() {
      const res = await fetch(`${http}_test/compacted`, { headers: ownerHeaders(http) });
      if (!res.ok) throw new Error(`compaction hook failed: ${res.status}`);
      return ((await res.json()) as { removed: number }).removed;
    },
    log() {
      try {
        return readFileSync(join(stateDir, "daemon.log"), "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      } catch {
        return [];
      }
    },
  };
}

/** Run the CLI to completion with exactly `env` (PATH added), optionally in
 * `cwd` and with `stdin`; `keepStdinOpen` leaves stdin open (a hook whose
 * harness never closes it). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  stdin?: string,
  options: { cwd?: string; keepStdinOpen?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: childEnv(env),
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    // A command may exit before reading all its stdin (the statusline stops at
    // its size limit): the EPIPE that follows is expected, not a test failure.
    child.stdin.on("error", () => {});
    if (stdin !== undefined) child.stdin.write(stdin);
    if (!options.keepStdinOpen) child.stdin.end();
    child.on("close", (code) => {
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
}

/** One instance for a whole test file: started before its tests, stopped
 * after them; `env` points the CLI at it. */
export function sharedInstance(): { inst: TestInstance; env: Record<string, string> } {
  const shared = {} as { inst: TestInstance; env: Record<string, string> };
  beforeAll(async () => {
    shared.inst = await startInstance();
    shared.env = { ...shared.inst.env, CCMSG_STATE_DIR: shared.inst.stateDir };
  });
  afterAll(async () => {
    await shared.inst.stop();
  });
  return shared;
}
