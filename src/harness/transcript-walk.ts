import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { AGENT_ID_PATTERN, type TranscriptHarness, transcriptTree } from "./transcript-files.js";

// Every transcript of a config home (harness.md §6.1), for a reader that
// follows them all (the search index): Claude Code's `projects/<dir>/<sid>.jsonl`
// and its sub-agents' `projects/<dir>/<sid>/subagents/agent-<id>.jsonl`;
// Codex's `sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`. Where a path sits
// in the tree says whose transcript it is; the walk also names the
// directories it went through, so a follower can watch them.

/** One transcript file and whose it is. */
export interface TranscriptFile {
  path: string;
  sid: string;
  /** Set for a sub-agent's own transcript. */
  agentId?: string;
}

const SID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ROLLOUT =
  /^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;
const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/** Whose transcript `path` is, from its place under the home's tree;
 * undefined for anything else (a meta file, a directory, a stray file). */
export function transcriptAt(
  harness: TranscriptHarness,
  home: string,
  path: string,
): TranscriptFile | undefined {
  const rel = relative(join(home, transcriptTree(harness)), path);
  if (rel.startsWith("..")) return undefined;
  const parts = rel.split(sep);
  if (harness === "codex") {
    const thread = parts.length === 4 ? ROLLOUT.exec(parts[3]!)?.[1] : undefined;
    return thread === undefined ? undefined : { path, sid: thread };
  }
  if (parts.length === 2) {
    const sid = parts[1]!.endsWith(".jsonl") ? parts[1]!.slice(0, -6) : "";
    return SID.test(sid) ? { path, sid } : undefined;
  }
  if (parts.length === 4 && parts[2] === "subagents" && SID.test(parts[1]!)) {
    const agentId = AGENT_FILE.exec(parts[3]!)?.[1];
    if (agentId !== undefined && AGENT_ID_PATTERN.test(agentId))
      return { path, sid: parts[1]!, agentId };
  }
  return undefined;
}

/** A directory's entries, or none when it cannot be read. */
async function entries(dir: string): Promise<{ name: string; dir: boolean }[]> {
  try {
    const found = await readdir(dir, { withFileTypes: true });
    return found.map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    return [];
  }
}

/**
 * Walk the home's transcript tree: the transcripts found and the directories
 * that can hold one (the tree itself included), each visited once. Symlinked
 * entries are not followed (the reader checks containment of what it opens).
 */
export async function walkTranscripts(
  harness: TranscriptHarness,
  home: string,
): Promise<{ files: TranscriptFile[]; dirs: string[] }> {
  const root = join(home, transcriptTree(harness));
  const files: TranscriptFile[] = [];
  const dirs: string[] = [root];
  const file = (path: string) => {
    const found = transcriptAt(harness, home, path);
    if (found !== undefined) files.push(found);
  };
  // Levels below the root that hold directories: Claude's project dirs, a
  // session's dir and its `subagents/`; Codex's year, month and day.
  const visit = async (dir: string, depth: number): Promise<void> => {
    for (const e of await entries(dir)) {
      const path = join(dir, e.name);
      if (!e.dir) {
        file(path);
        continue;
      }
      const deeper =
        harness === "codex"
          ? depth < 3
          : depth === 0 ||
            (depth === 1 && SID.test(e.name)) ||
            (depth === 2 && e.name === "subagents");
      if (!deeper) continue;
      dirs.push(path);
      await visit(path, depth + 1);
    }
  };
  await visit(root, 0);
  return { files, dirs };
}
