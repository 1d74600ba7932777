import { onPath, type RunResult, run } from "../probes/exec.js";

// tmux, the terminal sessions run in when ccmsg can reach them: typing into a
// session's pane (its state file names it, harness.md §5.1) and opening a new
// window to start or resume one in. Always `execFile`, never a shell: titles and paths
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

/** The visible text of a pane (no colours), or undefined when tmux could
 * not read it (no such pane, no server, tmux missing). */
export async function capturePane(
  target: TmuxPane,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const r = await run("tmux", [...server(target), "capture-pane", "-p", "-t", target.pane], {
    env,
    timeoutMs: TMUX_TIMEOUT_MS,
  });
  return r.ok ? r.stdout : undefined;
}

/** Where a new window opens: the tmux session of the process asking (it
 * runs inside tmux), or a named session of the default server, made
 * (detached) when it does not exist yet. */
export type WindowPlace = { current: true } | { session: string };

export interface WindowRequest {
  place: WindowPlace;
  cwd: string;
  /** The program and its arguments, run without a shell. */
  argv: readonly string[];
  /** Set in the program's environment. */
  vars?: Record<string, string>;
  /** Removed from the program's environment (the server's may hold them). */
  unset?: readonly string[];
}

export type NewWindow =
  | { ok: true /** `<session>:<window index>` */; window: string; pane: string }
  | { ok: false; why: string };

/** tmux hands a command to its server in one message of at most 16 KiB
 * (argv included); a longer one is refused ("command too long"). */
export const TMUX_COMMAND_MAX_BYTES = 15 * 1024;

/** The bytes a window request takes in tmux's command message (an
 * estimate with a margin: the fixed arguments are counted generously). */
export function windowRequestBytes(req: WindowRequest): number {
  return windowArgv(req).reduce((n, a) => n + Buffer.byteLength(a) + 1, 256);
}

/** The window's command: `env` clears and sets the variables, so the
 * server's own environment (whoever started it) cannot leak a session's
 * identity into the new one, and no tmux `-e` (3.2+ for new-session) is needed. */
function windowArgv(req: WindowRequest): string[] {
  return [
    "env",
    ...(req.unset ?? []).flatMap((name) => ["-u", name]),
    ...Object.entries(req.vars ?? {}).map(([k, v]) => `${k}=${v}`),
    ...req.argv,
  ];
}

/**
 * Open a tmux window running `argv` in `cwd`. tmux runs a command given as
 * several arguments directly, without a shell. Two callers racing to make
 * the same named session are the caller's to serialize.
 */
export async function openWindow(
  req: WindowRequest,
  env: NodeJS.ProcessEnv = process.env,
): Promise<NewWindow> {
  const printed = ["-P", "-F", "#{session_name}:#{window_index} #{pane_id}"];
  const command = windowArgv(req);
  let r: RunResult;
  if ("current" in req.place) {
    r = await run("tmux", ["new-window", ...printed, "-c", req.cwd, ...command], {
      env,
      timeoutMs: TMUX_TIMEOUT_MS,
    });
  } else {
    // The default server, whichever tmux this process was started in.
    const { TMUX: _server, TMUX_PANE: _pane, ...outside } = env;
    const opts = { env: outside, timeoutMs: TMUX_TIMEOUT_MS };
    const name = req.place.session;
    const has = await run("tmux", ["has-session", "-t", `=${name}`], opts);
    if (has.failure === "missing" || has.failure === "timeout") r = has;
    else if (has.ok)
      r = await run(
        "tmux",
        ["new-window", "-d", ...printed, "-t", `=${name}:`, "-c", req.cwd, ...command],
        opts,
      );
    else
      r = await run(
        "tmux",
        ["new-session", "-d", "-s", name, ...printed, "-c", req.cwd, ...command],
        opts,
      );
  }
  if (r.ok) {
    const [window = "", pane = ""] = r.stdout.trim().split(" ");
    return { ok: true, window, pane };
  }
  if (r.failure === "missing") return { ok: false, why: "tmux is not installed" };
  if (r.failure === "timeout") return { ok: false, why: "tmux did not answer in time" };
  return { ok: false, why: `tmux refused: ${r.stderr.trim() || `exit ${r.code}`}` };
}
