import {
  existsSync,
  linkSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { contractError } from "../contract/errors.js";

/**
 * One instance per state directory.
 *
 * The lock file is put in place with `link()`, which fails if the name exists
 * and publishes the file with its content complete (no reader ever sees an
 * empty lock). A lock whose holder is dead is taken over — never one whose
 * holder lives. Removing a stale lock happens under a short-lived second lock,
 * so two successors starting at once cannot delete each other's fresh lock.
 *
 * "Dead" is checked by `kill(pid, 0)` and, on Linux, by the process start time
 * recorded in the lock, so a recycled pid does not keep a dead instance's lock
 * alive forever.
 */
export class InstanceLock {
  private constructor(private readonly path: string) {}

  /** Take the lock, or fail with `internal_error` naming the live holder's
   * pid (the message is what `ccmsg daemon run` prints). */
  static acquire(path: string): InstanceLock {
    const mine = JSON.stringify({ pid: process.pid, start: processStart(process.pid) });
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      // Inside the try: a write that fails (ENOSPC) must not leave its temp.
      writeFileSync(tmp, mine, { mode: 0o600 });
      for (let attempt = 0; attempt < 100; attempt++) {
        try {
          linkSync(tmp, path);
          removeDeadTemps(dirname(path));
          return new InstanceLock(path);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
        const holder = readHolder(path);
        if (holder !== undefined && isAlive(holder)) {
          throw contractError(
            "internal_error",
            `another ccmsg instance (pid ${holder.pid}) is running on this state directory`,
          );
        }
        removeStale(path, holder);
      }
      throw contractError("internal_error", `could not take the instance lock at ${path}`);
    } finally {
      rmQuiet(tmp);
    }
  }

  /** Give the lock up: last step of a graceful stop. */
  release(): void {
    const holder = readHolder(this.path);
    if (holder?.pid === process.pid) rmQuiet(this.path);
  }
}

/** The pid of the live process holding the lock at `path`, if any: how the
 * CLI finds an instance whose socket it cannot reach. */
export function liveHolder(path: string): number | undefined {
  const holder = readHolder(path);
  return holder !== undefined && isAlive(holder) ? holder.pid : undefined;
}

/** Temp files of the state directory's writers (`<name>.<pid>.tmp`, from the
 * lock and atomic writes) whose process is gone: a crash or a full disk left
 * them. Removed once the lock is ours. */
function removeDeadTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/\.(\d+)\.tmp$/.exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !isAlive({ pid })) rmQuiet(join(dir, name));
  }
}

interface Holder {
  pid: number;
  start?: string | null;
}

function readHolder(path: string): Holder | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Holder;
    return Number.isInteger(value.pid) && value.pid > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // Same pid, different start time: the pid was recycled by another process.
  if (holder.start) {
    const now = processStart(holder.pid);
    if (now !== null && now !== holder.start) return false;
  }
  return true;
}

/** The kernel's start time of a process (Linux), or null where unknown. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 counts from after the command name, which may hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function removeStale(path: string, seen: Holder | undefined): void {
  const guard = `${path}.takeover`;
  try {
    writeFileSync(guard, String(process.pid), { flag: "wx", mode: 0o600 });
  } catch {
    // Someone else is taking over; a guard left by a crash mid-takeover is
    // removed when it names a dead process.
    const owner = Number(readQuiet(guard));
    if (owner > 0 && !isAlive({ pid: owner })) rmQuiet(guard);
    return;
  }
  try {
    const now = readHolder(path);
    // Remove only the lock we judged stale, not one a successor just placed.
    if (now?.pid === seen?.pid && now?.start === seen?.start && existsSync(path)) rmQuiet(path);
  } finally {
    rmQuiet(guard);
  }
}

function readQuiet(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function rmQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
