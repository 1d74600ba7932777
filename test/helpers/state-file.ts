import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processStatus } from "../../src/probes/process.js";

// Claude Code's session state files (harness.md §5.1) for processes tests
// start: the fields a real file has, with the pid-reuse guard filled from
// /proc, so the instance takes the process for the session's harness.

/** The start time /proc gives a running process (the state file's `procStart`). */
export async function procStartOf(pid: number): Promise<string> {
  const status = await processStatus(pid);
  if (!status.alive || status.start === undefined)
    throw new Error(`no /proc start time for ${pid}`);
  return status.start;
}

/** Write `<configDir>/sessions/<pid>.json` naming `sid`; `fields` override the
 * defaults (an idle interactive session started now). Returns its path. */
export function writeSessionFile(
  configDir: string,
  row: { pid: number; sessionId: string; procStart: string } & Record<string, unknown>,
): string {
  const dir = join(configDir, "sessions");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${row.pid}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      cwd: "/",
      kind: "interactive",
      startedAt: Date.now(),
      status: "idle",
      ...row,
    }),
  );
  return file;
}
