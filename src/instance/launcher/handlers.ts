import { randomUUID } from "node:crypto";
import { readConfig } from "../../config/config.js";
import type { LauncherConfig } from "../../config/launcher.js";
import { ContractError, contractError } from "../../contract/errors.js";
import type { Capability } from "../../contract/identifiers.js";
import type { LauncherRunResult, LauncherTemplate } from "../../contract/launcher.js";
import { findSessionFile } from "../../harness/claude/session-files.js";
import {
  DEFAULT_TMUX_SESSION,
  LAUNCH_SID_VARIABLE,
  launchEnvironment,
  launcherTemplates,
  runCommand,
  SESSION_VARIABLES,
  usesLaunchSid,
  WORKTREE_PARAM,
} from "../../harness/launch.js";
import {
  openWindow,
  TMUX_COMMAND_MAX_BYTES,
  type WindowRequest,
  windowRequestBytes,
} from "../../harness/tmux.js";
import { addWorktree, worktreePath, worktreeRoots } from "../../probes/git.js";
import { configFile } from "../../state/paths.js";
import type { Logger } from "../../util/logger.js";
import type { Handlers } from "../dispatch.js";
import type { HarnessKind, Presence } from "../sessions/presence.js";
import { dirTree } from "./dir-tree.js";
import { containedDirectory, realRoots } from "./roots.js";

// The launcher (contract §4.3.5, capability `launcher`): `dir_tree`,
// `launcher_config_read` and `launcher_run`, from the `launcher` section of
// ccmsg's config, read per request so an edit needs no restart. A launch runs
// its template's shell program in the chosen directory — in a new window of
// the launcher's tmux session when tmux is installed (the reply says where),
// else directly, waiting for it to end.

/** How long a launch may take by default (ms). */
export const DEFAULT_LAUNCH_TIMEOUT_MS = 15_000;
/** How often a launch looks for its session's state file. */
const SESSION_POLL_MS = 100;

/** What the launcher ops use. */
export interface LauncherHandlerDeps {
  log: Logger;
  /** Which sessions run, from the harness's files; `fresh()` before acting. */
  presence: Pick<Presence, "fresh">;
  capabilities: ReadonlySet<Capability>;
  /** The harness config home whose transcript tree transcripts must be in. */
  configHome: string;
  /** The harness whose config home it is. */
  harness: HarnessKind;
  /** The instance's environment (ccmsg's config file, tools on PATH). */
  env: NodeJS.ProcessEnv;
}

export function launcherHandlers(s: LauncherHandlerDeps): Handlers {
  /** tmux windows open one at a time: two launches must not both find the
   * tmux session missing and both try to make it. */
  let windows: Promise<unknown> = Promise.resolve();
  const oneWindowAtATime = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = windows.then(fn, fn);
    windows = p.catch(() => {});
    return p;
  };

  async function config(): Promise<LauncherConfig> {
    const path = configFile(undefined, s.env);
    let launcher: LauncherConfig | undefined;
    try {
      launcher = (await readConfig(path)).launcher;
    } catch (error) {
      // A config that cannot be read is not the caller's fault.
      if (error instanceof ContractError) throw contractError("internal_error", error.message);
      throw error;
    }
    if (launcher === undefined)
      throw contractError(
        "capability_unavailable",
        `the launcher is no longer configured: ${path} has no launcher section`,
      );
    return launcher;
  }

  /** The state file of the launched session, once its harness wrote it (then
   * `peers` and `agents` have it too); undefined past the deadline. */
  async function sessionUp(sid: string, deadline: number) {
    for (;;) {
      const row = await findSessionFile(s.configHome, sid);
      if (row !== undefined) {
        await s.presence.fresh();
        return row;
      }
      if (Date.now() >= deadline) return undefined;
      await new Promise((r) => setTimeout(r, SESSION_POLL_MS));
    }
  }

  return {
    async launcher_config_read() {
      const c = await config();
      return { root_dirs: c.roots, templates: launcherTemplates(c) };
    },

    async dir_tree({ roots, depth, filter }) {
      const real = await realRoots((await config()).roots);
      const starts: { path: string; real: string }[] = [];
      for (const path of roots) {
        const dir = await containedDirectory(path, real);
        if (!dir.ok) throw contractError("invalid_args", `/roots: ${dir.why}`);
        starts.push({ path, real: dir.real });
      }
      return { entries: await dirTree(starts, real, { depth, filter }) };
    },

    async launcher_run(args) {
      const c = await config();
      const template = pickTemplate(launcherTemplates(c), args.template);
      const values = paramValues(template, args.params);
      const command = args.command ?? template.command;
      if (command.includes("\0")) throw contractError("invalid_args", "/command: holds a NUL");
      const roots = await realRoots(c.roots);
      const dir = await containedDirectory(args.cwd, roots);
      if (!dir.ok) throw contractError("invalid_args", `/cwd: ${dir.why}`);
      const started = Date.now();
      const deadline = started + (c.timeout_ms ?? DEFAULT_LAUNCH_TIMEOUT_MS);
      let cwd = dir.real;
      let notes = "";
      const branch = values[WORKTREE_PARAM];
      if (branch) {
        cwd = await newWorktree(cwd, branch, roots);
        notes = `created worktree ${cwd} on branch ${branch}\n`;
      }
      const sid = randomUUID();
      const home = s.harness === "codex" ? "CODEX_HOME" : "CLAUDE_CONFIG_DIR";
      const vars: Record<string, string> = {
        ...values,
        [LAUNCH_SID_VARIABLE]: sid,
        [home]: s.configHome,
      };
      const log = { template: template.name, cwd, sid, own_command: args.command !== undefined };
      // tmux on PATH was looked up once, at start: it is what `terminal` says.
      if (!s.capabilities.has("terminal")) {
        const outcome = await runCommand(command, {
          cwd,
          env: launchEnvironment(s.env, vars),
          timeoutMs: Math.max(1, deadline - Date.now()),
        });
        s.log.info(
          { ...log, exit_code: outcome.exit_code, timed_out: outcome.timed_out },
          "launcher_run",
        );
        return { ...outcome, stdout: notes + outcome.stdout };
      }
      // A window of an existing tmux server gets that server's environment:
      // PATH comes along, so the harness is the one this instance would run.
      const req: WindowRequest = {
        place: { session: c.tmux_session ?? DEFAULT_TMUX_SESSION },
        cwd,
        argv: ["/bin/sh", "-c", command],
        vars: s.env.PATH === undefined ? vars : { PATH: s.env.PATH, ...vars },
        unset: SESSION_VARIABLES,
      };
      const bytes = windowRequestBytes(req);
      if (bytes > TMUX_COMMAND_MAX_BYTES)
        throw contractError(
          "invalid_args",
          `the command and parameters take ${bytes} bytes; a tmux window takes at most ${TMUX_COMMAND_MAX_BYTES}`,
        );
      const opened = await oneWindowAtATime(() => openWindow(req, s.env));
      if (!opened.ok) {
        s.log.warn({ ...log, why: opened.why }, "launcher_run: no tmux window");
        return { stdout: notes, stderr: `${opened.why}\n`, exit_code: 1, timed_out: false };
      }
      const result: LauncherRunResult = {
        stdout: `${notes}started in tmux window ${opened.window} (pane ${opened.pane})\n`,
        stderr: "",
        exit_code: 0,
        timed_out: false,
      };
      // A Claude Code session launched with its id is waited for, so the
      // reply comes once it shows on `peers` and `agents`.
      if (s.harness === "claude" && usesLaunchSid(command)) {
        const row = await sessionUp(sid, deadline);
        if (row === undefined) {
          const waited = Math.round((Date.now() - started) / 1000);
          s.log.warn({ ...log, window: opened.window }, "launcher_run: the session did not appear");
          return {
            stdout: result.stdout,
            stderr: `session ${sid} did not appear within ${waited} s (no state file of it in ${s.configHome}/sessions): look at tmux window ${opened.window}\n`,
            timed_out: true,
          };
        }
        result.stdout += `session ${sid} runs (pid ${row.pid})\n`;
      }
      s.log.info({ ...log, window: opened.window, pane: opened.pane }, "launcher_run");
      return result;
    },
  };
}

function pickTemplate(
  templates: readonly LauncherTemplate[],
  name: string | undefined,
): LauncherTemplate {
  const found = name === undefined ? templates[0] : templates.find((t) => t.name === name);
  if (found === undefined)
    throw contractError(
      "invalid_args",
      `/template: no template named ${JSON.stringify(name)} (configured: ${templates.map((t) => t.name).join(", ")})`,
    );
  return found;
}

/** Every parameter of the template, given or defaulted; an unknown name is
 * refused so a typo cannot launch with a default. */
function paramValues(
  template: LauncherTemplate,
  given: Record<string, string>,
): Record<string, string> {
  const known = new Set(template.params.map((p) => p.name));
  const unknown = Object.keys(given).filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw contractError(
      "invalid_args",
      `/params: template ${template.name} has no parameter ${unknown.join(", ")} (it has: ${[...known].join(", ") || "none"})`,
    );
  const values: Record<string, string> = {};
  for (const p of template.params) {
    const v = given[p.name] ?? p.default;
    if (v.includes("\0")) throw contractError("invalid_args", `/params/${p.name}: holds a NUL`);
    values[p.name] = v;
  }
  return values;
}

/** A new worktree on branch `branch` for the repository at `cwd` (the rule of
 * `ccmsg session create`), which must itself lie inside the roots; its
 * resolved path. */
async function newWorktree(cwd: string, branch: string, roots: readonly string[]) {
  const repo = await worktreeRoots(cwd);
  if (repo === undefined)
    throw contractError(
      "invalid_args",
      `/params/${WORKTREE_PARAM}: ${cwd} is in no git repository`,
    );
  const path = worktreePath(repo.mainRoot, branch);
  const parent = await containedDirectory(path.slice(0, path.lastIndexOf("/")) || "/", roots);
  if (!parent.ok)
    throw contractError(
      "invalid_args",
      `/params/${WORKTREE_PARAM}: the worktree would be ${path}, outside the launcher's roots`,
    );
  const added = await addWorktree(repo, branch);
  if (!added.ok)
    throw contractError(
      added.invalid ? "invalid_args" : "internal_error",
      `/params/${WORKTREE_PARAM}: ${added.why}`,
    );
  const made = await containedDirectory(added.path, roots);
  if (!made.ok) throw contractError("internal_error", `the new worktree: ${made.why}`);
  return made.real;
}
