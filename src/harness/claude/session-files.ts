import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { processStart } from "../../probes/process.js";

// Claude Code's state files, `<config home>/sessions/<pid>.json` (harness.md
// §5.1, unofficial): one per running Claude Code process, naming its session.
// Read only, never written.

/** State files read per lookup at most: one per running Claude Code process. */
const MAX_FILES = 1024;
const MAX_FILE_BYTES = 64 * 1024;

export interface HarnessProcess {
  pid: number;
}

/**
 * The running Claude Code process whose state file names `sid`, if any. A
 * file naming a dead pid, or a pid recycled by another process (its
 * `procStart` differs), is left behind by a crash and names nobody.
 */
export async function harnessProcessOf(
  configHome: string,
  sid: string,
): Promise<HarnessProcess | undefined> {
  const dir = join(configHome, "sessions");
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /^\d+\.json$/.test(n)).slice(0, MAX_FILES);
  } catch {
    return undefined;
  }
  for (const name of names) {
    const row = await readRow(join(dir, name));
    if (row?.sessionId !== sid || row.pid !== Number.parseInt(name, 10)) continue;
    const start = await processStart(row.pid);
    if (start === undefined) continue;
    if (typeof row.procStart === "string" && row.procStart !== start) continue;
    return { pid: row.pid };
  }
  return undefined;
}

async function readRow(
  path: string,
): Promise<{ pid?: unknown; sessionId?: unknown; procStart?: unknown } | undefined> {
  try {
    const text = await readFile(path, "utf8");
    if (text.length > MAX_FILE_BYTES) return undefined;
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    // Rewritten in place by the harness: a half-written file says nothing.
    return undefined;
  }
}
