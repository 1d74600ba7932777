import { open, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { readLines } from "../transcript-lines.js";

// Where a forked Claude Code session stops being a copy of its ancestor
// (contract §4.3.3 `session_fork_origin`). Verified with Claude Code 2.1.328:
// `--resume <sid> --fork-session` (and a resume that starts a new session)
// writes a new transcript that begins with the ancestor's conversation chain,
// record for record with the same `uuid`s and timestamps, but with `sessionId`
// (and `promptId`) rewritten to the new session. Nothing in the new file names
// the ancestor, so it is found by those shared uuids.

export interface ForkOrigin {
  /** The ancestor session. */
  sid: string;
  /** The last record of the fork whose uuid the ancestor also holds. */
  boundary_uuid: string;
  /** How many of the fork's records the ancestor also holds. */
  copied: number;
}

const TRANSCRIPT_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;
/** How much earlier than its first record's timestamp an ancestor's file may
 * have been last written (clocks and the harness's own buffering). */
const MTIME_SLACK_MS = 60_000;
const SEARCH_CHUNK_BYTES = 1 << 20;

/**
 * The ancestor of the session whose transcript is `forkPath` in config home
 * `home`, or undefined when it is no fork (no other transcript holds its
 * first record) or its ancestor's file is gone.
 *
 * Candidates are the other `projects/*\/<sid>.jsonl` files holding the fork's
 * first record, created before the fork (a later fork of the fork holds it
 * too; a file made in the same clock tick is not ruled out). The ancestor is the candidate holding the most of the fork's
 * records — the nearest one: a grandparent holds only an older prefix; ties
 * go to the newer file.
 */
export async function findForkOrigin(
  home: string,
  sid: string,
  forkPath: string,
): Promise<ForkOrigin | undefined> {
  const fork = await recordIds(forkPath);
  const first = fork.order[0];
  if (first === undefined) return undefined;
  const firstAt = fork.firstAt ?? 0;
  const born = (await stat(forkPath)).birthtimeMs;
  const projects = await realpath(join(home, "projects")).catch(() => undefined);
  if (projects === undefined) return undefined;
  let best: (ForkOrigin & { born: number }) | undefined;
  for (const candidate of await candidates(projects, sid, { uuid: first, at: firstAt }, born)) {
    const shared = await sharedRecords(candidate.path, fork.index);
    if (shared === undefined || shared.copied === 0) continue;
    const better =
      best === undefined ||
      shared.copied > best.copied ||
      (shared.copied === best.copied && candidate.born > best.born);
    if (better)
      best = {
        sid: candidate.sid,
        boundary_uuid: fork.order[shared.last]!,
        copied: shared.copied,
        born: candidate.born,
      };
  }
  if (best === undefined) return undefined;
  return { sid: best.sid, boundary_uuid: best.boundary_uuid, copied: best.copied };
}

/** A transcript's record uuids in file order, each one's position, and when
 * its first record was written (ms), when it says. */
async function recordIds(
  path: string,
): Promise<{ order: string[]; index: Map<string, number>; firstAt?: number }> {
  const order: string[] = [];
  const index = new Map<string, number>();
  let firstAt: number | undefined;
  for await (const batch of readLines(path))
    for (const line of batch) {
      const uuid = line.record?.uuid;
      if (typeof uuid !== "string" || index.has(uuid)) continue;
      if (order.length === 0) {
        const at = Date.parse(String(line.record?.timestamp));
        if (Number.isFinite(at)) firstAt = at;
      }
      index.set(uuid, order.length);
      order.push(uuid);
    }
  return { order, index, firstAt };
}

interface Candidate {
  sid: string;
  path: string;
  /** Creation time (ms), 0 where the file system does not keep one. */
  born: number;
}

/** The other transcripts under `projects` (resolved) that could be the
 * fork's ancestor and hold its first record `first`. */
async function candidates(
  projects: string,
  sid: string,
  first: { uuid: string; at: number },
  forkBorn: number,
): Promise<Candidate[]> {
  const out: Candidate[] = [];
  let dirs: string[];
  try {
    dirs = (await readdir(projects, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => join(projects, d.name));
  } catch {
    return [];
  }
  for (const dir of dirs) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = TRANSCRIPT_NAME.exec(name);
      if (m === null || m[1] === sid) continue;
      const path = join(dir, name);
      // Inside the tree once resolved, and a regular file.
      const real = await realpath(path).catch(() => undefined);
      if (real === undefined || !real.startsWith(`${projects}/`)) continue;
      const st = await stat(real).catch(() => undefined);
      if (st === undefined || !st.isFile()) continue;
      const born = Math.max(st.birthtimeMs, 0);
      if (born > 0 && forkBorn > 0 && born > forkBorn) continue;
      // Last written before the shared record was: it cannot hold it.
      if (st.mtimeMs < first.at - MTIME_SLACK_MS) continue;
      if (await contains(real, first.uuid)) out.push({ sid: m[1]!, path: real, born });
    }
  }
  return out;
}

/** Whether the file's bytes contain `text` (ASCII), read in chunks. */
async function contains(path: string, text: string): Promise<boolean> {
  const needle = Buffer.from(text);
  const handle = await open(path, "r").catch(() => undefined);
  if (handle === undefined) return false;
  try {
    const buffer = Buffer.allocUnsafe(SEARCH_CHUNK_BYTES + needle.length);
    let kept = 0;
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, kept, SEARCH_CHUNK_BYTES, position);
      if (bytesRead === 0) return false;
      const filled = kept + bytesRead;
      if (buffer.subarray(0, filled).indexOf(needle) >= 0) return true;
      // Keep the tail a match could straddle.
      kept = Math.min(needle.length - 1, filled);
      buffer.copy(buffer, 0, filled - kept, filled);
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/** How many of the fork's records (uuid → position) the candidate holds,
 * and the latest position among them. */
async function sharedRecords(
  path: string,
  fork: Map<string, number>,
): Promise<{ copied: number; last: number } | undefined> {
  const seen = new Set<string>();
  let last = -1;
  try {
    for await (const batch of readLines(path))
      for (const line of batch) {
        const uuid = line.record?.uuid;
        if (typeof uuid !== "string" || seen.has(uuid)) continue;
        const at = fork.get(uuid);
        if (at === undefined) continue;
        seen.add(uuid);
        if (at > last) last = at;
      }
  } catch {
    return undefined;
  }
  return { copied: seen.size, last };
}
