import { onPath, type RunResult, run } from "../probes/exec.js";

// tmux, the terminal sessions run in when ccmsg can reach them: typing into a
// session's pane (its state file names it, harness.md §5.1) and opening a new
// window to resume one in. Always `execFile`, never a shell: titles and paths
// are arguments, not text to interpret.

/** How long one tmux command may take: it only talks to its server. */
const TMUX_TIMEOUT_MS = 3000;

/** Whether tmux is installed (on PATH). */
export function tmuxInstalled(env: NodeJS.ProcessEnv = process.env): boolean {
  return onPath("tmux", env) !== undefined;
}

/** A pane of a tmux server: `%<n>`, on the server listening at `socket`
 * (absent: the default server). */
export interface TmuxPane {
  pane: string;
  socket?: string;
}

function server(target: { socket?: string }): string[] {
  return target.socket === undefined ? [] : ["-S", target.socket];
}

/** Type `text` literally into a pane, then Enter: one tmux invocation, so
 * nothing else is typed in between. */
export function typeLine(
  target: TmuxPane,
  text: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunResult> {
  return run(
    "tmux",
    [
      ...server(target),
      "send-keys",
      "-t",
      target.pane,
      "-l",
      text,
      ";",
      "send-keys",
      "-t",
      target.pane,
      "Enter",
    ],
    { env, timeoutMs: TMUX_TIMEOUT_MS },
  );
}

export type NewWindow = { ok: true; pane: string } | { ok: false; why: string };

/**
 * Run `argv` in a new window of the tmux server this process belongs to (or
 * the default one), starting in `cwd` with `vars` set. tmux runs a command
 * given as several arguments directly, without a shell.
 */
export async function newWindow(
  cwd: string,
  argv: readonly string[],
  vars: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<NewWindow> {
  const setEnv = Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const r = await run(
    "tmux",
    ["new-window", "-P", "-F", "#{pane_id}", "-c", cwd, ...setEnv, ...argv],
    { env, timeoutMs: TMUX_TIMEOUT_MS },
  );
  if (r.ok) return { ok: true, pane: r.stdout.trim() };
  if (r.failure === "missing") return { ok: false, why: "tmux is not installed" };
  if (r.failure === "timeout") return { ok: false, why: "tmux did not answer in time" };
  return { ok: false, why: `tmux refused: ${r.stderr.trim() || `exit ${r.code}`}` };
}
