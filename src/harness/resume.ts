import { SESSION_VARIABLES, shellQuote } from "./launch.js";
import { openWindow, type WindowPlace } from "./tmux.js";
import { locateTranscript } from "./transcript-files.js";
import { readLines } from "./transcript-lines.js";

// How a person reattaches to a session that has ended: Claude Code's
// `claude --resume <sid>` or Codex's `codex resume <thread>`, run in the
// session's own directory (Claude Code finds a session's transcript under its
// project directory) with the same config home. In a new tmux window when
// tmux can open one (the launcher's rule for where: the asking terminal's tmux
// session, else the dedicated one); otherwise the exact command to paste, and why.

export interface ResumeCommand {
  sid: string;
  cwd: string;
  argv: string[];
  /** The config home the command needs (`CLAUDE_CONFIG_DIR` / `CODEX_HOME`),
   * when this environment names one. */
  env: Record<string, string>;
  /** One line to paste into a POSIX shell. */
  command: string;
}

export function resumeCommand(
  harness: "claude" | "codex",
  sid: string,
  cwd: string,
  from: NodeJS.ProcessEnv = process.env,
): ResumeCommand {
  const argv = harness === "codex" ? ["codex", "resume", sid] : ["claude", "--resume", sid];
  const name = harness === "codex" ? "CODEX_HOME" : "CLAUDE_CONFIG_DIR";
  const env: Record<string, string> = {};
  const home = from[name];
  if (home) env[name] = home;
  const vars = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)} `);
  return {
    sid,
    cwd,
    argv,
    env,
    command: `cd ${shellQuote(cwd)} && ${vars.join("")}${argv.map(shellQuote).join(" ")}`,
  };
}

export type Launch =
  | { launched: true; terminal_id: string; window: string }
  | { launched: false; why: string };

/** Run the command in a new tmux window — in the tmux session `env` runs in,
 * else in session `tmuxSession` — without the session variables of whoever
 * asks; why not, when it cannot. */
export async function launchResume(
  cmd: ResumeCommand,
  tmuxSession: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Launch> {
  const place: WindowPlace = env.TMUX ? { current: true } : { session: tmuxSession };
  const r = await openWindow(
    { place, cwd: cmd.cwd, argv: cmd.argv, vars: cmd.env, unset: SESSION_VARIABLES },
    env,
  );
  return r.ok
    ? { launched: true, terminal_id: r.pane, window: r.window }
    : { launched: false, why: r.why };
}

/** Codex's rollout of thread `sid` under `codexHome` and the directory its
 * `session_meta` names; undefined when Codex has no such thread. */
export async function codexThread(
  codexHome: string,
  sid: string,
): Promise<{ path: string; cwd?: string } | undefined> {
  const path = await locateTranscript("codex", codexHome, sid);
  if (path === undefined) return undefined;
  return { path, cwd: await metaCwd(path) };
}

/** The `cwd` of a rollout's first record (`session_meta`), if it says. */
async function metaCwd(path: string): Promise<string | undefined> {
  try {
    for await (const batch of readLines(path, 0, { chunkBytes: 64 * 1024 })) {
      const payload = batch[0]?.record?.payload;
      const cwd =
        typeof payload === "object" && payload !== null
          ? (payload as Record<string, unknown>).cwd
          : undefined;
      return typeof cwd === "string" && cwd !== "" ? cwd : undefined;
    }
  } catch {
    // Unreadable: no directory known.
  }
  return undefined;
}
