import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import { ownerHeaders } from "./http.js";
import { ROOT } from "./instance.js";

// Running the real Claude Code (the devDependency) in tests, as harness spec
// §11 describes: a private config home that has answered the first-run
// questions, a scripted model on loopback, and interactive sessions in a
// private tmux server.

export const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const KEY = "sk-ant-test";

/** What a person answered once — onboarding, the folder's trust, the custom
 * key — and the environment that points Claude Code at the scripted model. */
export function claudeSetup(
  home: { HOME: string; CLAUDE_CONFIG_DIR: string },
  cwd: string,
  modelUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  writeFileSync(
    join(home.CLAUDE_CONFIG_DIR, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [KEY], rejected: [] },
      projects: { [cwd]: { hasTrustDialogAccepted: true } },
    }),
  );
  return {
    HOME: home.HOME,
    CLAUDE_CONFIG_DIR: home.CLAUDE_CONFIG_DIR,
    PATH: process.env.PATH!,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: KEY,
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra,
  };
}

/** An interactive harness in its own tmux server: read its screen, type into
 * it, and end it (the server and everything in it). */
export class TmuxSession {
  private readonly tmux: string[];

  /** With `paneKnown`, the harness keeps tmux's `TMUX` and `TMUX_PANE`, so
   * its state file names the pane (as for a person who runs it in tmux). */
  constructor(
    name: string,
    env: Record<string, string>,
    cwd: string,
    argv: string[],
    options: { paneKnown?: boolean } = {},
  ) {
    this.tmux = ["-L", `${name}-${process.pid}`, "-f", "/dev/null"];
    const words = Object.entries(env).map(([k, v]) => shellWord(`${k}=${v}`));
    // Expanded by the pane's shell, which tmux started with them set.
    if (options.paneKnown === true) words.push('TMUX="$TMUX"', 'TMUX_PANE="$TMUX_PANE"');
    const command = `exec env -i ${words.join(" ")} ${argv.map(shellWord).join(" ")}`;
    execFileSync("tmux", [
      ...this.tmux,
      "new-session",
      "-d",
      "-x",
      "200",
      "-y",
      "50",
      "-c",
      cwd,
      command,
    ]);
  }

  pane(): string {
    return execFileSync("tmux", [...this.tmux, "capture-pane", "-p"], { encoding: "utf8" });
  }

  /** Type `text` literally, without Enter: a draft left in the box. */
  draft(text: string): void {
    execFileSync("tmux", [...this.tmux, "send-keys", "-l", text]);
  }

  /** Press one key (tmux's name for it: `Escape`, `Enter`, …). */
  key(name: string): void {
    execFileSync("tmux", [...this.tmux, "send-keys", name]);
  }

  /** Type `text` literally, then Enter. */
  type(text: string): void {
    execFileSync("tmux", [...this.tmux, "send-keys", "-l", text]);
    execFileSync("tmux", [...this.tmux, "send-keys", "Enter"]);
  }

  /** End the server and wait until nothing it started is left: the pane's
   * process leads its own group, and Claude Code's hook commands (a session's
   * end runs some) stay in it, writing to the home until they exit. */
  async kill(): Promise<void> {
    const listed = spawnSync("tmux", [...this.tmux, "list-panes", "-a", "-F", "#{pane_pid}"], {
      encoding: "utf8",
    });
    const groups = (listed.stdout ?? "").split("\n").filter(Boolean).map(Number);
    spawnSync("tmux", [...this.tmux, "kill-server"], { stdio: "ignore" });
    await until("the harness and its hooks to exit", () =>
      groups.some(groupAlive) ? undefined : true,
    );
  }
}

/** `test`, printing what `report` gives (a harness's screen, a log) when it
 * fails: what the harness showed is the first thing to read. */
export function onFailShow(report: () => string[], test: () => Promise<void>) {
  return async () => {
    try {
      await test();
    } catch (error) {
      for (const r of report()) console.log(r);
      throw error;
    }
  };
}

/** An interactive Claude Code in its own tmux server. */
export class TmuxClaude extends TmuxSession {
  constructor(
    name: string,
    env: Record<string, string>,
    cwd: string,
    args: string[],
    options: { paneKnown?: boolean } = {},
  ) {
    super(name, env, cwd, [CLAUDE, ...args], options);
  }
}

/** Whether a process of group `pgid` still runs. One that has ended but
 * waits to be reaped (a zombie: the harness, once tmux's server is gone, is
 * reparented to an init that reaps it up to ~2 s later) writes nothing more. */
function groupAlive(pgid: number): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // After the command's name, in parentheses: state, ppid, pgrp.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** Poll `get` until it gives a value (each try may be async). */
export async function until<T>(
  what: string,
  get: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether a process still exists. */
export const alive = (pid: number) => existsSync(`/proc/${pid}`);

/** A Claude Code session's state file (harness spec §5.1), as read here. */
export type SessionState = Record<string, unknown> & { pid: number; sessionId: string };

/** The state file of a session of `claudeHome` once it is idle with its
 * messaging socket up (and `accept` says yes). */
export function idleSessionState(
  claudeHome: string,
  accept: (row: Record<string, unknown>) => boolean = () => true,
): Promise<SessionState> {
  const sessions = join(claudeHome, "sessions");
  return until("an idle session with a messaging socket", () => {
    if (!existsSync(sessions)) return undefined;
    for (const name of readdirSync(sessions).filter((n) => n.endsWith(".json"))) {
      try {
        const row = JSON.parse(readFileSync(join(sessions, name), "utf8"));
        if (row.messagingSocketPath && row.status === "idle" && accept(row))
          return row as SessionState;
      } catch {
        // Rewritten in place: read it again.
      }
    }
    return undefined;
  });
}

/** Until `sid`'s waiter (`ccmsg wait --hook`) holds its inbox on the instance
 * at `http` (its test route names the receiver). */
export function waiterArmed(http: string, sid: string): Promise<true> {
  return until("the waiter", async () => {
    const res = await fetch(`${http}_test/inbox-receiver/${sid}`, { headers: ownerHeaders(http) });
    return ((await res.json()) as { receiver: string | null }).receiver === "wait"
      ? true
      : undefined;
  });
}
