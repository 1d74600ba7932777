import { execFile } from "node:child_process";
import type { Check, Invocation } from "./command-line.js";

import type { Change } from "./files.js";

// What `ccmsg plugin` works from and what it reports, shared by the Claude
// Code and Codex installers.

export interface PluginContext {
  /** The instance's state directory; the generated files live under it. */
  stateDir: string;
  /** `--state-dir` arguments the hooks carry: set when the state directory
   * was chosen explicitly, so the hooks speak to that same instance. */
  stateDirArgs: string[];
  inv: Invocation;
  env: NodeJS.ProcessEnv;
  /** Allow rules for ccmsg's own tools (DR-0055): add (true), take out
   * ccmsg's (false), or leave as they are (absent). */
  allowTools?: boolean;
  /** The settings file they go into (Claude Code). */
  settingsFile?: string;
  /** The instance's hook route and its token (DR-0058): the hot hooks are
   * http hooks to it; absent, command hooks. */
  httpHook?: { url: string; token: string };
  /** The attention queue's hold in seconds of this harness's prompts (config
   * `attention.hold_seconds`, Codex's `attention.codex_hold_seconds`):
   * the PermissionRequest hook's timeout is this plus a margin (DR-0062). */
  permissionHoldS: number;
}

/** Allow rules an install or uninstall added or took out, in which file. */
export interface AllowChange {
  path: string;
  added: string[];
  removed: string[];
  /** Why nothing was done where the harness has no equivalent. */
  unsupported?: string;
}

/** A step the person still has to take. */
export interface Need {
  what: string;
  how: string;
}

/** A command of the harness's own CLI: run, or to be run by hand. */
export interface HarnessCommand {
  command: string;
  ran: boolean;
  result?: string;
}

export interface Outcome {
  harness: string;
  action: "install" | "uninstall";
  dry_run: boolean;
  changes: Change[];
  commands: HarnessCommand[];
  needs: Need[];
  allow_rules?: AllowChange;
}

export interface Status {
  harness: string;
  /** Every check passed. */
  wired: boolean;
  checks: Check[];
  needs: Need[];
}

/** Run a harness CLI with stdin closed and a time limit; never throws. */
export function runTool(
  exe: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      exe,
      args,
      { env, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.end();
  });
}

/** A tool's `--json` answer: the whole output when it is one JSON document
 * (a pretty-printed list), else its last line that is a JSON object or list
 * (a result line after other output). */
export function lastJson(stdout: string): unknown {
  try {
    return JSON.parse(stdout) as unknown;
  } catch {}
  for (const line of stdout.trim().split("\n").reverse()) {
    if (!/^\s*[[{]/.test(line)) continue;
    try {
      return JSON.parse(line) as unknown;
    } catch {}
  }
  return undefined;
}
