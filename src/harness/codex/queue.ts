import { stat } from "node:fs/promises";
import { join } from "node:path";
import { readThreadLocks } from "./thread-locks.js";

// Direct delivery into Codex (harness.md §7.3, unofficial): `codex queue`
// hands a message to a running thread. Verified present in codex-cli 0.169.0:
// `codex queue [OPTIONS] --thread <THREAD> --message <TEXT>` ("Queue a message
// for an existing session"). It has no refusals and no status channel.

/** The longest `codex queue` may run before it counts as not delivered. */
export const CODEX_QUEUE_BUDGET_MS = 10_000;
/** Harness variables a Codex child must not inherit: a Codex session started
 * inside Claude Code carries them and would act as the wrong session. */
const CLAUDE_VARIABLES = ["CLAUDE_CONFIG_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR"];
/** Enough of `codex queue`'s stderr to say why it failed, for the log. */
const STDERR_KEPT = 2048;

/** Whether Codex runs thread `thread` (its writer lock is there and held,
 * as `readThreadLocks` tells), has only left its lock behind (`stale`), or
 * has no lock for it at all (`absent`: only a new file can change that). */
export async function codexThread(
  codexHome: string,
  thread: string,
): Promise<"running" | "stale" | "absent"> {
  const lock = join(codexHome, "thread-writer-locks", `${thread}.lock`);
  if ((await stat(lock).catch(() => undefined)) === undefined) return "absent";
  const read = await readThreadLocks(codexHome);
  return read.ok && read.threads.includes(thread) ? "running" : "stale";
}

export interface CodexQueue {
  /** The `codex` executable: a name found on PATH or a path. */
  command: string;
  codexHome: string;
  thread: string;
  /** The rendered `<cross-session-message>` text. */
  message: string;
  /** The environment to start from (the instance's own). */
  env: NodeJS.ProcessEnv;
}

export type CodexOutcome = { outcome: "delivered" } | { outcome: "unavailable"; why: string };

/**
 * Run `codex queue --thread <id> --message <text>` without a shell, stdin
 * closed, the Claude variables removed and CODEX_HOME set, killed after
 * CODEX_QUEUE_BUDGET_MS. Exit 0 is delivered; anything else is unavailable.
 */
export async function queueIntoCodex(q: CodexQueue): Promise<CodexOutcome> {
  const env: NodeJS.ProcessEnv = { ...q.env, CODEX_HOME: q.codexHome };
  for (const name of CLAUDE_VARIABLES) delete env[name];
  // Loaded on the first delivery to Codex, not at the instance's start.
  const { spawn } = await import("node:child_process");
  return new Promise((settle) => {
    let stderr = "";
    let timedOut = false;
    const child = spawn(q.command, ["queue", "--thread", q.thread, "--message", q.message], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, CODEX_QUEUE_BUDGET_MS);
    child.stderr.on("data", (c: Buffer) => {
      if (stderr.length < STDERR_KEPT) stderr += c.toString("utf8").slice(0, STDERR_KEPT);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle({ outcome: "unavailable", why: `codex: ${error.code ?? error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return settle({ outcome: "delivered" });
      const why = timedOut
        ? `codex queue ran past ${CODEX_QUEUE_BUDGET_MS} ms`
        : `codex queue exited ${code ?? signal}: ${stderr.trim().split("\n")[0] ?? ""}`;
      settle({ outcome: "unavailable", why });
    });
  });
}
