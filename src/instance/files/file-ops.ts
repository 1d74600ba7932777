import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, realpath, unlink } from "node:fs/promises";
import { basename, dirname, isAbsolute } from "node:path";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import type { DirEntry } from "../../contract/files.js";
import { utf8Length } from "../../contract/frames.js";
import { mapLimited } from "../../util/map-limited.js";
import {
  entriesPath,
  errnoRefusal,
  isRefusal,
  type Opened,
  openChecked,
  type Refusal,
  readEntries,
  refusal,
} from "./checked-open.js";
import { type Admitted, normalizeRelative } from "./surfaces.js";
import { decodeText, fitText, READ_LIMIT, readHead } from "./text.js";

// What each file op does once its path is admitted (contract §4.3.4). Every
// open goes through checked-open.ts; creating, deleting and writing happen in
// a directory proven first and reached through its descriptor.

/** Entries one `dir_list` returns at most; the rest of a larger directory
 * (by name, among the first MAX_SCAN_ENTRIES read) is left out — the reply
 * has no field to say so (DR-0036). */
export const MAX_DIR_ENTRIES = 5000;
/** Room for a reply's list or content inside one frame. */
const REPLY_BYTES = MAX_FRAME_BYTES - 8192;
/** lstat calls in flight while listing. */
const PARALLEL_STATS = 32;

const C = constants;
/** Create only: never replace, never follow, never wait. */
const CREATE = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;

/** An instant as the wire's Unix ms (never negative). */
export function mtimeAt(st: Stats): number {
  return Math.max(0, Math.trunc(st.mtimeMs));
}

async function withDir<T>(real: string, use: (via: string) => Promise<T>): Promise<T | Refusal> {
  const opened = await openChecked(real, "dir");
  if (isRefusal(opened)) return opened;
  try {
    return await use(await entriesPath(opened.fh, real));
  } finally {
    await opened.fh.close();
  }
}

/** One entry as a listing shows it: what it is, not what it points at. */
function entryOf(name: string, st: Stats | undefined): DirEntry {
  if (st === undefined) return { name, type: "other" };
  if (st.isSymbolicLink()) return { name, type: "symlink", mtime_at: mtimeAt(st) };
  if (st.isDirectory()) return { name, type: "dir", mtime_at: mtimeAt(st) };
  // A file with other names may share its inode with one outside the
  // surface: listed as `other`, like FIFOs, sockets and devices.
  if (st.isFile() && st.nlink === 1)
    return { name, type: "file", size: st.size, mtime_at: mtimeAt(st) };
  return { name, type: "other" };
}

/** `dir_list`: the entries of an admitted directory, by name. */
export function listDir(a: Admitted): Promise<DirEntry[] | Refusal> {
  return withDir(a.real, async (via) => {
    const names = (await readEntries(via)).entries.slice(0, MAX_DIR_ENTRIES).map((e) => e.name);
    const entries = await mapLimited(names, PARALLEL_STATS, async (name) =>
      entryOf(name, await lstat(`${via}/${name}`).catch(() => undefined)),
    );
    let bytes = 0;
    const fits = entries.findIndex((e) => {
      bytes += utf8Length(JSON.stringify(e)) + 1;
      return bytes > REPLY_BYTES - utf8Length(a.shown);
    });
    return fits < 0 ? entries : entries.slice(0, fits);
  });
}

export interface ReadOutcome {
  size: number;
  truncated: boolean;
  binary: boolean;
  content: string;
  mtime_at: number;
}

/** `file_read`: the head of an admitted regular file. */
export async function readFile(a: Admitted): Promise<ReadOutcome | Refusal> {
  const opened = await openChecked(a.real, "read", a.identity);
  if (isRefusal(opened)) return opened;
  try {
    const { stats, fh } = opened;
    const head = await readHead(fh, Math.min(stats.size, READ_LIMIT));
    let truncated = stats.size > head.length;
    const text = decodeText(head, truncated);
    let content = text ?? "";
    const fitted = fitText(content, REPLY_BYTES - utf8Length(a.shown));
    if (fitted.length < content.length) {
      content = fitted;
      truncated = true;
    }
    return {
      size: stats.size,
      truncated,
      binary: text === undefined,
      content,
      mtime_at: mtimeAt(stats),
    };
  } finally {
    await opened.fh.close();
  }
}

/** Write all of `data` at offset 0 of an opened file and cut it there. */
async function overwrite(fh: FileHandle, data: Buffer): Promise<void> {
  await fh.truncate(0);
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, done);
    done += bytesWritten;
  }
}

/** `file_edit`: overwrite an admitted file in place, only if it is still
 * the file that was read (mtime and size) and it is text. */
export async function editFile(
  a: Admitted,
  content: string,
  expected: { mtime_at: number; size: number },
): Promise<{ size: number; mtime_at: number } | Refusal> {
  const opened = await openChecked(a.real, "edit", a.identity);
  if (isRefusal(opened)) return opened;
  const { fh, stats } = opened;
  try {
    // The lock is checked on the descriptor that will be written.
    if (mtimeAt(stats) !== expected.mtime_at || stats.size !== expected.size)
      return refusal(
        "conflict",
        `${a.shown} changed since it was read (now ${stats.size} bytes, mtime ${mtimeAt(stats)})`,
      );
    const head = await readHead(fh, Math.min(stats.size, READ_LIMIT));
    if (decodeText(head, stats.size > head.length) === undefined)
      return refusal("binary", `${a.shown} is not a text file`);
    await overwrite(fh, Buffer.from(content, "utf8"));
    const after = await fh.stat();
    return { size: after.size, mtime_at: mtimeAt(after) };
  } finally {
    await fh.close();
  }
}

/** Create `name` in a proven directory with `content`; never replaces
 * anything (a dangling symlink included). */
async function createIn(via: string, name: string, content: string, mode: number) {
  let fh: FileHandle;
  try {
    fh = await open(`${via}/${name}`, CREATE, mode);
  } catch (error) {
    return errnoRefusal(error, name);
  }
  try {
    await overwrite(fh, Buffer.from(content, "utf8"));
  } finally {
    await fh.close();
  }
  return undefined;
}

/** The directory an entry is made in or removed from, proven; its absence
 * (or a file or dangling symlink in its place) is `missing`. */
async function parentOf(a: Admitted): Promise<Opened | Refusal> {
  const dir = await openChecked(dirname(a.real), "dir");
  if (!isRefusal(dir) || !["missing", "not_dir", "symlink"].includes(dir.refused)) return dir;
  return refusal("missing", `${dirname(a.shown) || "the root"}: no such directory`);
}

/** `file_create`: a new file in an existing directory of the surface (no
 * parent is made). `a` was admitted with its last component as the entry. */
export async function createFile(a: Admitted, content: string): Promise<Refusal | undefined> {
  const dir = await parentOf(a);
  if (isRefusal(dir)) return dir;
  try {
    return await createIn(
      await entriesPath(dir.fh, dirname(a.real)),
      basename(a.real),
      content,
      0o666,
    );
  } finally {
    await dir.fh.close();
  }
}

/** `file_delete`: unlink one regular file (not a directory, not a symlink)
 * from a proven directory. `a` was admitted with its last component kept. */
export async function deleteFile(a: Admitted): Promise<Refusal | undefined> {
  const dir = await parentOf(a);
  if (isRefusal(dir)) return dir;
  try {
    const entry = `${await entriesPath(dir.fh, dirname(a.real))}/${basename(a.real)}`;
    let st: Stats;
    try {
      st = await lstat(entry);
    } catch (error) {
      return errnoRefusal(error, a.shown);
    }
    if (st.isSymbolicLink()) return refusal("symlink", `${a.shown} is a symlink`);
    if (st.isDirectory()) return refusal("directory", `${a.shown} is a directory`);
    if (!st.isFile()) return refusal("special", `${a.shown} is not a regular file`);
    try {
      await unlink(entry);
    } catch (error) {
      return errnoRefusal(error, a.shown);
    }
    return undefined;
  } finally {
    await dir.fh.close();
  }
}

/** Where `file_write` puts files, relative to the session's cwd. */
export const INBOX_DIR = ".ccmsg/inbox";
/** Written into `.ccmsg/` when it is made, so git never shows the inbox. */
const IGNORE_ALL = "# ccmsg: files handed to this session (file_write)\n*\n";

/**
 * `file_write`: hand a file to the session — it lands at `<cwd>/.ccmsg/inbox/
 * <path>`, directories below the inbox made as needed, each one proven
 * before the next is made in it, and never replaces a file. Returns the path
 * relative to the cwd, as the session would open it.
 */
export async function writeToInbox(
  cwd: string | undefined,
  path: string,
  content: string,
): Promise<string | Refusal> {
  const rel = normalizeRelative(path);
  if (rel === undefined || rel === "")
    return refusal("outside", `${path} is not a path inside the inbox directory`);
  if (cwd === undefined || !isAbsolute(cwd))
    return refusal("outside", "the session has no known working directory");
  let dir: string;
  try {
    dir = await realpath(cwd);
  } catch (error) {
    return errnoRefusal(error, cwd);
  }
  const parts = [...INBOX_DIR.split("/"), ...rel.split("/")];
  const name = parts.pop()!;
  for (const [i, part] of parts.entries()) {
    const made = await withDir(dir, async (via) => {
      try {
        await mkdir(`${via}/${part}`, 0o700);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
        return errnoRefusal(error, part);
      }
    });
    if (isRefusal(made)) return made;
    dir = dir === "/" ? `/${part}` : `${dir}/${part}`;
    // Proven before anything is written in it, like every other directory.
    if (made && i === 0) {
      const ignored = await withDir(dir, (via) => createIn(via, ".gitignore", IGNORE_ALL, 0o644));
      if (isRefusal(ignored)) return ignored;
    }
  }
  const made = await withDir(dir, (via) => createIn(via, name, content, 0o600));
  if (isRefusal(made)) return made;
  return `${INBOX_DIR}/${rel}`;
}
