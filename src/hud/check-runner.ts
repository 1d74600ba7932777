import { spawn } from "node:child_process";
import type { CheckConfig } from "../config/config.js";
import type { CheckRun } from "../store/check-runs.js";

// Running the local checks the config declares: one at a time (checks often
// share build outputs), each with `sh -c` in the repository root, keeping the
// tail of the combined output for the record.

/** How much of a check's output is kept. */
export const OUTPUT_TAIL_CHARS = 4096;

export function runCheck(check: CheckConfig, repoRoot: string): Promise<CheckRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    let tail = "";
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
    };
    const finish = (status: CheckRun["status"], exitCode: number | null, extra = "") =>
      resolve({
        repoRoot,
        name: check.name,
        command: check.command,
        status,
        exitCode,
        durationMs: Date.now() - started,
        outputTail: (tail + extra).slice(-OUTPUT_TAIL_CHARS),
        finishedAt: new Date().toISOString(),
      });
    const child = spawn("sh", ["-c", check.command], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (e) => finish("error", null, `\n${e.message}`));
    child.on("close", (code, signal) => {
      if (signal !== null) finish("error", null, `\nkilled by ${signal}`);
      else finish(code === 0 ? "pass" : "fail", code);
    });
  });
}
