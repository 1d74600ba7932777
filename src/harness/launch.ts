import type { HarnessTemplateConfig, LauncherConfig } from "../config/launcher.js";
import type { LauncherTemplate } from "../contract/launcher.js";

// Starting a harness session: the launcher's templates (contract §4.3.5) and
// what every launched or resumed session's process gets. A template is a
// shell program; the values a launch brings arrive as shell variables and are
// never spliced into its text, so no value can become code.

/** The fresh session id each launch brings. The command ccmsg writes for
 * Claude Code passes it to `claude --session-id`, so the instance knows which
 * session to wait for. */
export const LAUNCH_SID_VARIABLE = "CCMSG_LAUNCH_SID";
/** A template parameter of this name, when given a value, asks for the launch
 * to run in a new git worktree on a new branch of that name. */
export const WORKTREE_PARAM = "WORKTREE";
/** The tmux session launched and resumed sessions open in by default. */
export const DEFAULT_TMUX_SESSION = "ccmsg";

/** Variables that tie a process to the session it runs in (harness.md §8),
 * or tell Claude Code it runs inside another one: a launched session is
 * nobody's child, so none of them may reach it. */
export const SESSION_VARIABLES = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SESSION_ID",
  "CLAUDE_PROJECT_DIR",
  "CODEX_THREAD_ID",
  "CODEX_SESSION_ID",
] as const;

/** Quote for a POSIX shell, only when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** The templates as `launcher_config_read` shows them: a harness template
 * written out as the shell program ccmsg runs for it. */
export function launcherTemplates(config: LauncherConfig): LauncherTemplate[] {
  return config.templates.map((t) =>
    "harness" in t
      ? harnessTemplate(t)
      : { name: t.name, command: t.command, params: t.params.map((p) => ({ ...p })) },
  );
}

const param = (name: string) => ({ name, default: "" });
/** Shell text giving `words` only when variable `name` is set and not empty. */
const ifSet = (name: string, words: string) => `\${${name}:+${words}}`;

/**
 * `exec [env K=V…] claude --session-id "$CCMSG_LAUNCH_SID" <args> [--name
 * "$NAME"] [-- "$PROMPT"]` (Codex: `codex <args> [-- "$PROMPT"]`; Codex mints
 * its own thread id). `${X:+…}` leaves an empty parameter out entirely, and
 * `--` keeps a prompt that starts with `-` a prompt.
 */
function harnessTemplate(t: HarnessTemplateConfig): LauncherTemplate {
  const env = Object.entries(t.env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  const head = env.length > 0 ? ["exec", "env", ...env] : ["exec"];
  const args = t.args.map(shellQuote);
  const prompt = ifSet("PROMPT", '-- "$PROMPT"');
  if (t.harness === "codex")
    return {
      name: t.name,
      command: [...head, "codex", ...args, prompt].join(" "),
      params: [param("PROMPT"), param(WORKTREE_PARAM)],
    };
  return {
    name: t.name,
    command: [
      ...head,
      "claude",
      "--session-id",
      `"$${LAUNCH_SID_VARIABLE}"`,
      ...args,
      ifSet("NAME", '--name "$NAME"'),
      prompt,
    ].join(" "),
    params: [param("PROMPT"), param("NAME"), param(WORKTREE_PARAM)],
  };
}

/** Whether a command passes the launch's session id on (so the session it
 * starts can be waited for by that id). */
export function usesLaunchSid(command: string): boolean {
  return new RegExp(`\\$\\{?${LAUNCH_SID_VARIABLE}\\b`).test(command);
}

/** `base` without the session variables (nor, for a process started outside
 * tmux, tmux's own), with `vars` set. */
export function launchEnvironment(
  base: NodeJS.ProcessEnv,
  vars: Record<string, string>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of [...SESSION_VARIABLES, "TMUX", "TMUX_PANE"]) delete env[name];
  return { ...env, ...vars };
}

/** What a command run to its end produced (the shape of `launcher_run`'s
 * result). */
export interface CommandOutcome {
  stdout: string;
  stderr: string;
  /** Absent when a signal ended it, or it was given up on. */
  exit_code?: number;
  timed_out: boolean;
}

/** Output kept per stream: a reply must fit one frame even when every byte
 * is escaped as six. */
export const OUTPUT_MAX_BYTES = 64 * 1024;
/** After a given-up command was sent SIGTERM, how long before SIGKILL. */
const KILL_AFTER_MS = 2000;
/** How long after the shell exits its output may still arrive (a process it
 * left running can hold the pipes open forever). */
const DRAIN_MS = 200;

/**
 * Run `sh -c command` in `cwd`, stdin closed, in a process group of its own,
 * and resolve when it exits or when `timeoutMs` passes. A command given up on
 * gets SIGTERM (its whole group), SIGKILL 2 s later, and the reply does not
 * wait for either.
 */
export async function runCommand(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandOutcome> {
  // Loaded on the first launch, not at the instance's start.
  const { spawn } = await import("node:child_process");
  return new Promise((resolve) => {
    const out = new Capture();
    const err = new Capture();
    let settled = false;
    const finish = (outcome: Omit<CommandOutcome, "stdout" | "stderr">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ stdout: out.text(), stderr: err.text(), ...outcome });
    };
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (c: Buffer) => out.add(c));
    child.stderr.on("data", (c: Buffer) => err.add(c));
    const group = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    child.once("error", (e) => {
      err.add(Buffer.from(`cannot run /bin/sh: ${e.message}\n`));
      finish({ timed_out: false });
    });
    child.once("exit", (code) => {
      const done = () => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code === null ? { timed_out: false } : { exit_code: code, timed_out: false });
      };
      let closed = false;
      child.once("close", () => {
        closed = true;
        done();
      });
      setTimeout(() => {
        if (!closed) done();
      }, DRAIN_MS).unref();
    });
    const timer = setTimeout(() => {
      finish({ timed_out: true });
      group("SIGTERM");
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) group("SIGKILL");
      }, KILL_AFTER_MS).unref();
      child.stdout.destroy();
      child.stderr.destroy();
    }, options.timeoutMs);
  });
}

/** The first OUTPUT_MAX_BYTES of a stream, and how much more there was. */
class Capture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  add(chunk: Buffer): void {
    const room = OUTPUT_MAX_BYTES - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }

  text(): string {
    const text = Buffer.concat(this.chunks).toString("utf8");
    return this.dropped > 0 ? `${text}\n… [${this.dropped} more bytes]\n` : text;
  }
}
