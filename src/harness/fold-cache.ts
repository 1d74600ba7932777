import { mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../state/atomic-write.js";
import { sha256Hex } from "../util/sha256.js";
import {
  type FoldHarness,
  newSessionFold,
  SESSION_FOLD_VERSION,
  type SessionFold,
} from "./fold-state.js";
import { foldLines } from "./session-fold.js";
import { readLines } from "./transcript-lines.js";

// A transcript's fold, resumed from where the last run left it. The
// statusline and `ccmsg hud` run in a fresh process each time and must not
// read a transcript of hundreds of MB on every refresh: the fold is kept in a
// cache file per transcript, keyed by the file's identity (device, inode) and
// the byte offset it reached, and only what was appended since is folded
// (DR-0028). A cache of another format or fold version, a file that was
// replaced (another inode) or shortened, or whose bytes before the offset
// changed, is thrown away and the file folded from the start.

/** The cache file's own format; the fold's version is checked beside it. */
const CACHE_FORMAT = 1;
/** Bytes before the offset kept to notice a file rewritten in place. */
const TAIL_BYTES = 64;
/** Cache files kept per directory; the least recently written go first. */
const MAX_CACHE_FILES = 256;

interface CacheFile {
  format: number;
  foldVersion: number;
  path: string;
  dev: number;
  ino: number;
  offset: number;
  /** base64 of the bytes just before `offset`. */
  tail: string;
  fold: SessionFold;
}

export interface FoldedFile {
  fold: SessionFold;
  /** Where the fold stopped: just past the last complete line. */
  offset: number;
  /** Bytes folded by this call (0 when the cache was current). */
  foldedBytes: number;
  /** Whether a cache was used. */
  resumed: boolean;
}

/** The cache file of a transcript path. */
export function foldCachePath(cacheDir: string, path: string): string {
  return join(cacheDir, `${sha256Hex(path).slice(0, 32)}.json`);
}

/**
 * Fold a transcript, resuming from its cache in `cacheDir` when the cache is
 * still good, and leave the cache current. Without `cacheDir` the file is
 * folded whole. Throws when the transcript cannot be read.
 */
export async function foldFile(
  path: string,
  harness: FoldHarness,
  cacheDir?: string,
  agent = false,
): Promise<FoldedFile> {
  const st = await stat(path);
  const cachePath = cacheDir === undefined ? undefined : foldCachePath(cacheDir, path);
  const cached =
    cachePath === undefined ? undefined : await loadCache(cachePath, path, harness, agent, st);
  const fold = cached?.fold ?? newSessionFold(harness, agent);
  const from = cached?.offset ?? 0;
  let offset = from;
  for await (const batch of readLines(path, from, { until: st.size })) {
    foldLines(fold, batch);
    const last = batch[batch.length - 1]!;
    offset = last.offset + last.bytes;
  }
  if (cachePath !== undefined && (cached === undefined || offset !== from)) {
    try {
      await saveCache(cachePath, { path, dev: st.dev, ino: st.ino, offset, fold });
    } catch {
      // A cache that cannot be written costs the next run time, nothing more.
    }
  }
  return { fold, offset, foldedBytes: offset - from, resumed: cached !== undefined };
}

async function loadCache(
  cachePath: string,
  path: string,
  harness: FoldHarness,
  agent: boolean,
  st: { dev: number; ino: number; size: number },
): Promise<{ fold: SessionFold; offset: number } | undefined> {
  let c: CacheFile;
  try {
    c = JSON.parse(await readFile(cachePath, "utf8")) as CacheFile;
  } catch {
    return undefined;
  }
  if (
    c?.format !== CACHE_FORMAT ||
    c.foldVersion !== SESSION_FOLD_VERSION ||
    c.fold?.v !== SESSION_FOLD_VERSION ||
    c.fold.harness !== harness ||
    c.fold.agent !== agent ||
    c.path !== path ||
    c.dev !== st.dev ||
    c.ino !== st.ino ||
    !Number.isInteger(c.offset) ||
    c.offset < 0 ||
    c.offset > st.size
  )
    return undefined;
  if ((await tailBefore(path, c.offset)) !== c.tail) return undefined;
  return { fold: c.fold, offset: c.offset };
}

/** base64 of the (up to) TAIL_BYTES bytes before `offset`. */
async function tailBefore(path: string, offset: number): Promise<string> {
  const n = Math.min(TAIL_BYTES, offset);
  if (n === 0) return "";
  const handle = await open(path, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await handle.read(buf, 0, n, offset - n);
    return buf.subarray(0, bytesRead).toString("base64");
  } finally {
    await handle.close();
  }
}

async function saveCache(
  cachePath: string,
  c: Omit<CacheFile, "format" | "foldVersion" | "tail">,
): Promise<void> {
  const dir = join(cachePath, "..");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file: CacheFile = {
    format: CACHE_FORMAT,
    foldVersion: SESSION_FOLD_VERSION,
    ...c,
    tail: await tailBefore(c.path, c.offset),
  };
  let fresh = false;
  try {
    statSync(cachePath);
  } catch {
    fresh = true;
  }
  writeFileAtomic(cachePath, JSON.stringify(file), 0o600);
  if (fresh) prune(dir);
}

/** Keep the directory to MAX_CACHE_FILES: a new cache file pushes out the
 * least recently written. */
function prune(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return;
  }
  if (names.length <= MAX_CACHE_FILES) return;
  const aged = names
    .map((n) => {
      try {
        return { n, t: statSync(join(dir, n)).mtimeMs };
      } catch {
        return { n, t: 0 };
      }
    })
    .sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, names.length - MAX_CACHE_FILES)) {
    try {
      unlinkSync(join(dir, n));
    } catch {}
  }
}
