import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

// Codex's running threads (harness.md §7.4, unofficial): a thread that runs
// holds `$CODEX_HOME/thread-writer-locks/<thread>.lock`. The file names the
// thread and carries no pid; a SIGKILL leaves it behind until Codex sweeps it.
// Codex 0.169.0 holds an exclusive flock(2) on the file while the thread runs
// (seen in /proc/locks), so where /proc/locks can be read a file nobody holds
// is stale; elsewhere every file counts.

/** Lock files read per pass at most. */
export const MAX_THREAD_LOCKS = 1024;
const THREAD_LOCK = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.lock$/;

export type ThreadLocksRead =
  | { ok: true; threads: string[]; readAt: number; truncated: boolean }
  | { ok: false; readAt: number; error: string };

/** `major:minor:inode` of every flock(2) held now, as /proc/locks spells it;
 * undefined without /proc/locks. */
export async function heldFlocks(): Promise<Set<string> | undefined> {
  let text: string;
  try {
    text = await readFile("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  const held = new Set<string>();
  // `1: FLOCK  ADVISORY  WRITE 24028 fe:00:2147424 0 EOF` (blocked waiters
  // carry a `->` and hold nothing).
  for (const m of text.matchAll(/^\d+: FLOCK\s+\S+\s+\S+\s+\d+\s+([0-9a-f]+):([0-9a-f]+):(\d+) /gm))
    held.add(`${Number.parseInt(m[1]!, 16)}:${Number.parseInt(m[2]!, 16)}:${m[3]}`);
  return held;
}

/** The pids holding a flock(2) on each file (`major:minor:inode`), from
 * /proc/locks; undefined without it. A flock's pid is the process that took
 * it (a child that inherited the descriptor holds it too, unnamed). */
export async function flockHolders(): Promise<Map<string, number[]> | undefined> {
  let text: string;
  try {
    text = await readFile("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  const holders = new Map<string, number[]>();
  for (const m of text.matchAll(
    /^\d+: FLOCK\s+\S+\s+\S+\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+) /gm,
  )) {
    const id = `${Number.parseInt(m[2]!, 16)}:${Number.parseInt(m[3]!, 16)}:${m[4]}`;
    holders.set(id, [...(holders.get(id) ?? []), Number(m[1])]);
  }
  return holders;
}

/** The /proc/locks spelling of a file's device and inode (Linux `dev_t`). */
export function lockId(dev: number, ino: number): string {
  const major = Math.floor(dev / 256) % 4096;
  const minor = (dev % 256) + Math.floor(dev / 1048576) * 256;
  return `${major}:${minor}:${ino}`;
}

/** The threads whose lock file is there (and held, where that can be told). */
export async function readThreadLocks(codexHome: string): Promise<ThreadLocksRead> {
  const readAt = Date.now();
  const dir = join(codexHome, "thread-writer-locks");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR")
      return { ok: false, readAt, error: (error as Error).message };
    names = [];
  }
  const locks = names.filter((n) => THREAD_LOCK.test(n)).sort();
  const truncated = locks.length > MAX_THREAD_LOCKS;
  const held = locks.length > 0 ? await heldFlocks() : undefined;
  const threads: string[] = [];
  for (const name of locks.slice(0, MAX_THREAD_LOCKS)) {
    const thread = THREAD_LOCK.exec(name)![1]!;
    if (held === undefined) {
      threads.push(thread);
      continue;
    }
    const st = await stat(join(dir, name)).catch(() => undefined);
    if (st !== undefined && held.has(lockId(st.dev, st.ino))) threads.push(thread);
  }
  return { ok: true, threads, readAt, truncated };
}
