import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { isAcceptedTranscriptPath } from "../contract/transcript-path.js";

// Where a session's transcript is (harness.md §6.1), under the containment
// rule: whatever names the file — the path a session announced, a walk of the
// harness's tree, an agent id — the resolved path must lie inside the config
// home's transcript tree (`projects/` for Claude Code, `sessions/` for Codex),
// so naming a transcript can never turn into reading an arbitrary file.

export type TranscriptHarness = "claude" | "codex";

/** The tree under a config home that holds the harness's transcripts. */
export function transcriptTree(harness: TranscriptHarness): string {
  return harness === "claude" ? "projects" : "sessions";
}

/** An agent id names a file: letters, digits, `_` and `-` only. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** A Codex rollout's name ends with the thread id it records. */
const ROLLOUT =
  /^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/**
 * Resolve what exists of a path (following symlinks and `..`) and keep the
 * rest as written: a transcript may not exist yet when a session greets.
 */
export async function resolveExisting(path: string): Promise<string> {
  const tail: string[] = [];
  let head = resolve(path);
  for (;;) {
    try {
      return join(await realpath(head), ...tail.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(path);
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** Why a path is refused as a transcript of `home`, or undefined when it is
 * inside the home's transcript tree once resolved. */
export async function containmentRefusal(
  path: string,
  home: string,
  harness: TranscriptHarness,
): Promise<string | undefined> {
  if (!path.startsWith("/")) return "not an absolute path";
  const tree = transcriptTree(harness);
  const [resolved, resolvedHome] = await Promise.all([
    resolveExisting(path),
    resolveExisting(home),
  ]);
  return isAcceptedTranscriptPath(resolved, resolvedHome, tree)
    ? undefined
    : `outside ${join(resolvedHome, tree)} (resolves to ${resolved})`;
}

/** The resolved path when it is a regular file inside the tree; else undefined. */
async function containedFile(
  path: string,
  home: string,
  harness: TranscriptHarness,
): Promise<string | undefined> {
  if ((await containmentRefusal(path, home, harness)) !== undefined) return undefined;
  try {
    const real = await realpath(path);
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

export interface LocateOptions {
  /** The `transcript_path` the session announced (already accepted once). */
  announced?: string;
  /** A sub-agent's transcript below the session (Claude Code). */
  agentId?: string;
}

/**
 * The file holding a session's transcript (or one of its agents'), resolved
 * and contained; undefined when there is none. Claude Code: the announced
 * path, else `projects/<any>/<sid>.jsonl`; an agent's file sits beside it in
 * `<sid>/subagents/agent-<id>.jsonl`. Codex: the rollout whose name ends with
 * the thread id, under `sessions/YYYY/MM/DD/`.
 */
export async function locateTranscript(
  harness: TranscriptHarness,
  home: string,
  sid: string,
  options: LocateOptions = {},
): Promise<string | undefined> {
  if (harness === "codex") {
    if (options.agentId !== undefined) return undefined;
    if (options.announced !== undefined) {
      const found = await containedFile(options.announced, home, harness);
      if (found !== undefined) return found;
    }
    return findRollout(home, sid);
  }
  let main: string | undefined;
  if (options.announced !== undefined && basename(options.announced) === `${sid}.jsonl`)
    main = await containedFile(options.announced, home, harness);
  main ??= await findClaudeTranscript(home, sid);
  if (options.agentId === undefined) return main;
  if (!AGENT_ID_PATTERN.test(options.agentId)) return undefined;
  // The agent's file may exist while the main one does not yet: look in each
  // project directory that could hold the session.
  const dirs =
    main !== undefined ? [dirname(main)] : await projectDirs(join(home, transcriptTree(harness)));
  for (const dir of dirs) {
    const found = await containedFile(
      join(dir, sid, "subagents", `agent-${options.agentId}.jsonl`),
      home,
      harness,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

async function projectDirs(projects: string): Promise<string[]> {
  try {
    const entries = await readdir(projects, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => join(projects, e.name));
  } catch {
    return [];
  }
}

/** `projects/<flattened cwd>/<sid>.jsonl`, in whichever project it is. */
async function findClaudeTranscript(home: string, sid: string): Promise<string | undefined> {
  for (const dir of await projectDirs(join(home, "projects"))) {
    const found = await containedFile(join(dir, `${sid}.jsonl`), home, "claude");
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The newest rollout of a Codex thread (a resumed thread may have several):
 * day directories are walked newest first. */
async function findRollout(home: string, thread: string): Promise<string | undefined> {
  const root = join(home, "sessions");
  const names = async (dir: string) => {
    try {
      return (await readdir(dir)).sort().reverse();
    } catch {
      return [];
    }
  };
  for (const y of await names(root))
    for (const m of await names(join(root, y)))
      for (const d of await names(join(root, y, m)))
        for (const f of await names(join(root, y, m, d))) {
          if (ROLLOUT.exec(f)?.[1] !== thread) continue;
          const found = await containedFile(join(root, y, m, d, f), home, "codex");
          if (found !== undefined) return found;
        }
  return undefined;
}

/** One sub-agent of a Claude Code session, from its `.meta.json`. */
export interface SubagentFile {
  agentId: string;
  path: string;
  /** The meta file as written (agentType, description, toolUseId, taskKind,
   * name, …; open), or {} when it is missing or unreadable. */
  meta: Record<string, unknown>;
}

/** The sub-agents whose transcripts sit beside a session's main transcript. */
export async function listSubagents(mainPath: string, sid: string): Promise<SubagentFile[]> {
  const dir = join(dirname(mainPath), sid, "subagents");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: SubagentFile[] = [];
  for (const name of names.sort()) {
    const m = /^agent-(.+)\.jsonl$/.exec(name);
    if (m === null || !AGENT_ID_PATTERN.test(m[1]!)) continue;
    let meta: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(
        await readFile(join(dir, `agent-${m[1]}.meta.json`), "utf8"),
      );
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        meta = parsed as Record<string, unknown>;
    } catch {
      // No meta (or a torn one): the agent is still listed.
    }
    out.push({ agentId: m[1]!, path: join(dir, name), meta });
  }
  return out;
}

/** The agent id of a teammate, found by the name it is addressed by. */
export async function teammateAgentId(
  mainPath: string,
  sid: string,
  name: string,
): Promise<string | undefined> {
  for (const agent of await listSubagents(mainPath, sid)) {
    const m = agent.meta;
    if (m.taskKind !== "in_process_teammate") continue;
    if (m.name === name || m.teammateName === name || m.agentName === name) return agent.agentId;
  }
  return undefined;
}
