import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

// Running the external tools the HUD reads (git, gh). A tool that is missing,
// slow or failing is a missing signal, never an error: every call resolves.

/** The longest a HUD probe may take (the brief's bound for each call). */
export const PROBE_TIMEOUT_MS = 1500;

export interface RunOptions {
  cwd?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  maxBuffer?: number;
}

export interface RunResult {
  /** Exit status 0. */
  ok: boolean;
  /** Why it did not succeed: the tool is not installed, it took too long, or it
   * exited non-zero (its output is still kept: `gh pr checks` reports failing
   * checks with exit 1 and pending ones with exit 8). */
  failure?: "missing" | "timeout" | "exit";
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `cmd args` without a shell; resolves with what happened. */
export async function run(
  cmd: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  // Loaded on the first run: an instance answers before it runs anything.
  const { execFile } = await import("node:child_process");
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? PROBE_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: options.maxBuffer ?? 8 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ ok: true, code: 0, stdout, stderr });
        const e = error as { killed?: boolean; code?: unknown };
        // ENOENT also means a missing cwd; callers check their directory first.
        if (e.code === "ENOENT")
          return resolve({ ok: false, failure: "missing", code: null, stdout, stderr });
        if (e.killed) return resolve({ ok: false, failure: "timeout", code: null, stdout, stderr });
        const code = typeof e.code === "number" ? e.code : null;
        resolve({ ok: false, failure: "exit", code, stdout, stderr });
      },
    );
  });
}

/** The absolute path of an executable on PATH, found without spawning
 * anything (the HUD asks "is gh installed?" on every run). */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return undefined;
}
