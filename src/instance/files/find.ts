import type { Dirent } from "node:fs";
import { lstat } from "node:fs/promises";
import { relative } from "node:path";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import type { FileFindHit } from "../../contract/files.js";
import { utf8Length } from "../../contract/frames.js";
import {
  entriesPath,
  isRefusal,
  openChecked,
  openDirChecked,
  readEntries,
} from "./checked-open.js";
import { type IgnoreLevel, isIgnored, parseIgnore } from "./gitignore.js";
import { readHead } from "./text.js";

// `file_find` (contract §4.3.4): a breadth-first walk of one surface, so
// shallow matches come first, with a budget (entries, time, hits, reply
// bytes) and every directory opened by proof (checked-open.ts) — a walk
// never follows a symlink and never lists a directory swapped out of the
// root while it ran. Names are matched against the path relative to the
// surface's root: every query word must occur in it, no `-word` may.

export interface FindLimits {
  /** Hits returned; one more match sets `truncated`. */
  maxHits: number;
  /** Directory entries looked at before the walk gives up. */
  maxEntries: number;
  /** Wall time before the walk gives up. */
  budgetMs: number;
}

export const FIND_LIMITS: FindLimits = { maxHits: 500, maxEntries: 1_000_000, budgetMs: 5000 };

/** Room for the hits in one reply frame. */
const HIT_BYTES = MAX_FRAME_BYTES - 8192;
/** Directories read at once. */
const PARALLEL_DIRS = 16;
/** The most of one ignore file read. */
const IGNORE_FILE_LIMIT = 256 * 1024;

/** Where a walk starts. */
export interface FindStart {
  /** The start directory on disk (resolved, admitted). */
  real: string;
  /** How hits below it are spelled: `""` (contained root) or a prefix. */
  shown: string;
  /** The resolved root of its surface, which names are matched from and
   * ignore files are read down from. */
  base: string;
}

export interface Query {
  include: string[];
  exclude: string[];
}

/** Whitespace-separated words, `-word` excluding; case-insensitive. */
export function parseQuery(query: string): Query {
  const q: Query = { include: [], exclude: [] };
  for (const w of query.toLowerCase().split(/\s+/)) {
    if (w === "" || w === "-") continue;
    if (w.startsWith("-")) q.exclude.push(w.slice(1));
    else q.include.push(w);
  }
  return q;
}

function matches(q: Query, path: string): boolean {
  const p = path.toLowerCase();
  return q.include.every((w) => p.includes(w)) && !q.exclude.some((w) => p.includes(w));
}

interface Dir {
  real: string;
  /** Relative to the surface root. */
  rel: string;
  /** Relative to the walk's start (how hits are spelled below `shown`). */
  fromStart: string;
  start: FindStart;
  ignores: readonly IgnoreLevel[];
}

const join = (a: string, b: string) => (a === "" ? b : a === "/" ? `/${b}` : `${a}/${b}`);

/** The rules of an ignore file, read by proof; none when absent or odd. */
async function ignoreFile(real: string): Promise<IgnoreLevel["rules"]> {
  const opened = await openChecked(real, "read").catch(() => undefined);
  if (opened === undefined || isRefusal(opened)) return [];
  try {
    const size = Math.min(opened.stats.size, IGNORE_FILE_LIMIT);
    return parseIgnore((await readHead(opened.fh, size)).toString("utf8"));
  } finally {
    await opened.fh.close();
  }
}

/** The ignore levels that apply at the start: `.git/info/exclude` and each
 * `.gitignore` from the surface root down to (not including) the start —
 * never above the surface root. */
async function ignoresAbove(start: FindStart): Promise<IgnoreLevel[]> {
  const levels: IgnoreLevel[] = [
    { dir: "", rules: await ignoreFile(`${start.base}/.git/info/exclude`) },
  ];
  const rel = relative(start.base, start.real);
  const parts = rel === "" ? [] : rel.split("/");
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const rules = await ignoreFile(`${join(start.base, dir)}/.gitignore`);
    if (rules.length > 0) levels.push({ dir, rules });
  }
  return levels;
}

/** One directory's entries, read through its proven descriptor, which stays
 * open (and the directory reachable through `via`) until `close`; undefined
 * when it cannot be proven to be the directory that was walked into. */
async function entriesOf(
  real: string,
): Promise<{ entries: Dirent[]; more: boolean; via: string; close(): Promise<void> } | undefined> {
  const fh = await openDirChecked(real);
  if (fh === undefined) return undefined;
  try {
    const via = await entriesPath(fh, real);
    return { ...(await readEntries(via)), via, close: () => fh.close() };
  } catch {
    await fh.close();
    return undefined;
  }
}

export interface FindResult {
  hits: FileFindHit[];
  truncated: boolean;
}

/** Walk `starts` for names matching `query`. */
export async function findFiles(
  starts: readonly FindStart[],
  query: string,
  respectGitignore: boolean,
  limits: FindLimits = FIND_LIMITS,
): Promise<FindResult> {
  const q = parseQuery(query);
  const hits: FileFindHit[] = [];
  if (q.include.length === 0) return { hits, truncated: false };
  const deadline = Date.now() + limits.budgetMs;
  let seen = 0;
  let bytes = 0;
  /** Add a hit; false once the reply is full (one match too many). */
  const add = (hit: FileFindHit): boolean => {
    const cost = utf8Length(JSON.stringify(hit)) + 1;
    if (hits.length >= limits.maxHits || bytes + cost > HIT_BYTES) return false;
    hits.push(hit);
    bytes += cost;
    return true;
  };
  let level: Dir[] = [];
  for (const start of starts) {
    const ignores = respectGitignore ? await ignoresAbove(start) : [];
    level.push({
      real: start.real,
      rel: relative(start.base, start.real),
      fromStart: "",
      start,
      ignores,
    });
  }
  /** Some directory was read only in part: the answer may miss matches. */
  let cut = false;
  while (level.length > 0) {
    const next: Dir[] = [];
    for (let i = 0; i < level.length; i += PARALLEL_DIRS) {
      if (Date.now() > deadline || seen > limits.maxEntries) return { hits, truncated: true };
      const batch = level.slice(i, i + PARALLEL_DIRS);
      const read = await Promise.all(batch.map((d) => entriesOf(d.real)));
      try {
        for (let b = 0; b < batch.length; b++) {
          const dir = batch[b]!;
          const listing = read[b];
          if (listing === undefined) continue;
          seen += listing.entries.length;
          // A directory too large to read whole: what it holds beyond is unseen.
          if (listing.more) cut = true;
          let ignores = dir.ignores;
          if (
            respectGitignore &&
            listing.entries.some((e) => e.name === ".gitignore" && e.isFile())
          ) {
            const rules = await ignoreFile(`${join(dir.real, ".gitignore")}`);
            if (rules.length > 0) ignores = [...ignores, { dir: dir.rel, rules }];
          }
          for (const e of listing.entries) {
            // Node asks lstat itself where the filesystem reports no type.
            const type: FileFindHit["type"] | "other" = e.isDirectory()
              ? "dir"
              : e.isSymbolicLink()
                ? "symlink"
                : e.isFile()
                  ? "file"
                  : "other";
            if (type === "other") continue;
            if (respectGitignore && e.name === ".git") continue;
            const rel = join(dir.rel, e.name);
            if (respectGitignore && isIgnored(ignores, rel, type === "dir")) continue;
            const fromStart = join(dir.fromStart, e.name);
            if (type === "dir")
              next.push({
                real: join(dir.real, e.name),
                rel,
                fromStart,
                start: dir.start,
                ignores,
              });
            if (!matches(q, rel)) continue;
            if (type === "file") {
              // A file with other names is no file of this surface (checked-open.ts).
              const st = await lstat(`${listing.via}/${e.name}`).catch(() => undefined);
              if (st === undefined || !st.isFile() || st.nlink > 1) continue;
            }
            if (!add({ path: join(dir.start.shown, fromStart), type }))
              return { hits, truncated: true };
          }
        }
      } finally {
        await Promise.all(read.map((l) => l?.close()));
      }
    }
    level = next;
  }
  return { hits, truncated: cut };
}
