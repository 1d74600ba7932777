import { constants, type Dirent, type Stats } from "node:fs";
import { type FileHandle, lstat, open, opendir, readlink, realpath, stat } from "node:fs/promises";

// The one way the file ops open anything (contract §4.3.4; DR-0036). A path
// is checked first — every existing component resolved, the result inside
// the surface — and what is then opened is proven to be what was checked:
// the last component is never followed (O_NOFOLLOW), nothing blocks on open
// (O_NONBLOCK: a FIFO swapped in answers at once), and after the open the
// descriptor itself is asked where it is (/proc/self/fd/<n>) and what it is
// (fstat against the checked lstat). A directory component swapped for a
// symlink between check and use moves the descriptor's path and is refused.
// Entries of an opened directory are reached through its descriptor's path,
// so listing, creating and unlinking happen in the directory that was proven.

/** Why a file op refuses a path; each op maps these to its own codes. */
export type RefusalReason =
  /** The surface does not admit it (outside, or led out by a symlink). */
  | "outside"
  /** Nothing there. */
  | "missing"
  /** A directory where a file was wanted. */
  | "directory"
  /** Not a directory where one was wanted. */
  | "not_dir"
  /** A FIFO, socket, device, or a file that has other names (hard links):
   * never opened, since reading it could block or reach outside. */
  | "special"
  /** A symlink where only the entry itself may be acted on. */
  | "symlink"
  /** It changed between the check and the open. */
  | "changed"
  | "exists"
  /** The operating system refused (permissions). */
  | "denied"
  /** The edit's lock token does not match the file. */
  | "conflict"
  /** The content on disk is not text. */
  | "binary";

export interface Refusal {
  refused: RefusalReason;
  msg: string;
}

export function refusal(refused: RefusalReason, msg: string): Refusal {
  return { refused, msg };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "refused" in value;
}

/** A file's identity on disk. */
export interface Identity {
  dev: number;
  ino: number;
}

function sameFile(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** Whether `path` is `root` or below it (both absolute, resolved). */
export function inside(path: string, root: string): boolean {
  if (root === "/") return path.startsWith("/");
  return path === root || path.startsWith(`${root}/`);
}

export type OpenMode = "read" | "edit" | "dir";

const C = constants;
const FLAGS: Record<OpenMode, number> = {
  read: C.O_RDONLY,
  edit: C.O_RDWR,
  dir: C.O_RDONLY | C.O_DIRECTORY,
};
/** Never follow the last component, never wait on a FIFO, never take a
 * terminal as controlling one. */
const ALWAYS = C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;

/** Test seam: runs after a path was checked and before it is opened, so a
 * test can swap what is there deterministically. Unset in production. */
let beforeOpen: ((path: string) => unknown) | undefined;
export function setBeforeOpenForTests(fn: ((path: string) => unknown) | undefined): void {
  beforeOpen = fn;
}

let procFds: Promise<boolean> | undefined;
/** Whether descriptors can be asked where they are (Linux /proc). */
function hasProcFds(): Promise<boolean> {
  procFds ??= stat("/proc/self/fd").then(
    (s) => s.isDirectory(),
    () => false,
  );
  return procFds;
}

/** The path through which an opened directory's entries are reached: its
 * descriptor's own link where there is one (so a directory renamed or
 * swapped afterwards is not followed), else its checked path. */
export async function entriesPath(fh: FileHandle, real: string): Promise<string> {
  return (await hasProcFds()) ? `/proc/self/fd/${fh.fd}` : real;
}

/** Whether the descriptor sits at `real`: asked of /proc where there is one,
 * else by resolving `real` again and comparing identities. */
async function sitsAt(fh: FileHandle, real: string, opened: Stats): Promise<boolean> {
  if (await hasProcFds()) return (await readlink(`/proc/self/fd/${fh.fd}`)) === real;
  try {
    return (await realpath(real)) === real && sameFile(await stat(real), opened);
  } catch {
    return false;
  }
}

/** What refuses a file of this type for `mode`, if anything. */
function typeRefusal(st: Stats, mode: OpenMode, path: string): Refusal | undefined {
  if (st.isSymbolicLink()) return refusal("symlink", `${path} is a symlink`);
  if (mode === "dir")
    return st.isDirectory() ? undefined : refusal("not_dir", `${path} is not a directory`);
  if (st.isDirectory()) return refusal("directory", `${path} is a directory`);
  if (!st.isFile()) return refusal("special", `${path} is not a regular file`);
  if (st.nlink > 1)
    return refusal("special", `${path} has other names (hard links) that may lie elsewhere`);
  return undefined;
}

/** The refusal an fs error stands for; other errors are the instance's. */
export function errnoRefusal(error: unknown, path: string): Refusal {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return refusal("missing", `nothing at ${path}`);
    case "ELOOP":
      return refusal("changed", `${path} became a symlink`);
    case "EISDIR":
      return refusal("directory", `${path} is a directory`);
    case "EEXIST":
      return refusal("exists", `${path} already exists`);
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return refusal("denied", `${path}: permission denied`);
    case "ENXIO":
    case "ENODEV":
      return refusal("special", `${path} is not a regular file`);
    default:
      throw error;
  }
}

export interface Opened {
  fh: FileHandle;
  /** fstat of the descriptor. */
  stats: Stats;
}

/**
 * Open a checked path (`real`: absolute, every component resolved, already
 * inside its surface) and prove the descriptor is that file: the type is
 * looked at before opening (a FIFO or device is never opened), the open
 * follows no final symlink, and afterwards the descriptor's identity must
 * match the lstat and its path must still be `real`. `expect`: an identity
 * the admission saw (an external file as itself), which must match too.
 */
export async function openChecked(
  real: string,
  mode: OpenMode,
  expect?: Identity,
): Promise<Opened | Refusal> {
  let before: Stats;
  try {
    before = await lstat(real);
  } catch (error) {
    return errnoRefusal(error, real);
  }
  const wrong = typeRefusal(before, mode, real);
  if (wrong !== undefined) return wrong;
  if (expect !== undefined && !sameFile(before, expect))
    return refusal("changed", `${real} changed while it was being checked`);
  await beforeOpen?.(real);
  let fh: FileHandle;
  try {
    fh = await open(real, FLAGS[mode] | ALWAYS);
  } catch (error) {
    return errnoRefusal(error, real);
  }
  try {
    const stats = await fh.stat();
    const bad =
      typeRefusal(stats, mode, real) ??
      (sameFile(stats, before) && (await sitsAt(fh, real, stats))
        ? undefined
        : refusal("changed", `${real} changed while it was being opened`));
    if (bad === undefined) return { fh, stats };
    await fh.close();
    return bad;
  } catch (error) {
    await fh.close();
    throw error;
  }
}

/** Open a directory met during a walk, with the same proof but no lstat or
 * fstat: O_DIRECTORY refuses anything else before it is opened, and where
 * the descriptor sits is asked as for every open. */
export async function openDirChecked(real: string): Promise<FileHandle | undefined> {
  await beforeOpen?.(real);
  let fh: FileHandle;
  try {
    fh = await open(real, FLAGS.dir | ALWAYS);
  } catch {
    return undefined;
  }
  try {
    if (await hasProcFds()) {
      if ((await readlink(`/proc/self/fd/${fh.fd}`)) === real) return fh;
    } else if (await sitsAt(fh, real, await fh.stat())) return fh;
  } catch {
    // fall through: not provably the directory that was checked
  }
  await fh.close();
  return undefined;
}

/** Entries of one directory looked at, at most: a directory larger than
 * this is read no further (its names are never all held, nor sorted). */
export const MAX_SCAN_ENTRIES = 20_000;

/** Up to `cap` entries of the directory at `via`, sorted by name, read in
 * steps (never one huge read), and whether it holds more. */
export async function readEntries(
  via: string,
  cap = MAX_SCAN_ENTRIES,
): Promise<{ entries: Dirent[]; more: boolean }> {
  const entries: Dirent[] = [];
  let more = false;
  const dir = await opendir(via, { bufferSize: 1024 });
  try {
    for (let e = await dir.read(); e !== null; e = await dir.read()) {
      if (entries.length === cap) {
        more = true;
        break;
      }
      entries.push(e);
    }
  } finally {
    await dir.close();
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, more };
}
