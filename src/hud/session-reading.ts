import { stat } from "node:fs/promises";
import { readTodoFile } from "../harness/claude/todos.js";
import { foldFile } from "../harness/fold-cache.js";
import type { SessionFold, TokenTotals } from "../harness/fold-state.js";
import type { StatusFacts, SubagentFacts } from "../harness/status-snapshot.js";
import {
  listSubagents,
  locateTranscript,
  type TranscriptHarness,
} from "../harness/transcript-files.js";

// What the CLI's surfaces (the HUD, session-inspect) read of one session: its
// transcript's fold, its sub-agents (each folded too) and its todo file. The
// CLI runs afresh each time, so every fold resumes from the fold cache.

/** Sub-agents folded per session; more are listed from their metas only. */
const MAX_FOLDED_AGENTS = 32;

export interface SessionReading {
  harness: TranscriptHarness;
  sid: string;
  path: string;
  fold: SessionFold;
  facts: StatusFacts;
  /** Each sub-agent's transcript path, by agent id. */
  agentPaths: Map<string, string>;
}

export interface ReadingPlaces {
  /** The harness's config home (Claude Code's, or CODEX_HOME). */
  home: string;
  /** The transcript path the session announced, if any. */
  announced?: string;
  /** Where folds are cached (`<state dir>/fold-cache`); none: fold whole. */
  cacheDir?: string;
  /** Fold the sub-agents and read the todo file too (default true). */
  beside?: boolean;
}

/** The session's reading, or undefined when it has no transcript (or the
 * transcript cannot be read). */
export async function readSession(
  harness: TranscriptHarness,
  sid: string,
  places: ReadingPlaces,
): Promise<SessionReading | undefined> {
  const path = await locateTranscript(harness, places.home, sid, {
    announced: places.announced,
  }).catch(() => undefined);
  if (path === undefined) return undefined;
  let fold: SessionFold;
  try {
    fold = (await foldFile(path, harness, places.cacheDir)).fold;
  } catch {
    return undefined;
  }
  const reading: SessionReading = {
    harness,
    sid,
    path,
    fold,
    facts: { subagents: [] },
    agentPaths: new Map(),
  };
  if (places.beside === false || harness !== "claude") return reading;
  const [todoFile, agents] = await Promise.all([
    readTodoFile(places.home, sid),
    listSubagents(path, sid),
  ]);
  if (todoFile !== undefined) reading.facts.todoFile = todoFile;
  reading.facts.subagents = await Promise.all(
    agents.map(async (a, i): Promise<SubagentFacts> => {
      reading.agentPaths.set(a.agentId, a.path);
      const facts: SubagentFacts = { agentId: a.agentId, meta: a.meta };
      if (i >= MAX_FOLDED_AGENTS) return facts;
      try {
        const [folded, st] = await Promise.all([
          foldFile(a.path, harness, places.cacheDir, true),
          stat(a.path),
        ]);
        facts.fold = folded.fold;
        facts.mtimeMs = st.mtimeMs;
      } catch {}
      return facts;
    }),
  );
  return reading;
}

/** Tokens of the session and every sub-agent folded with it. */
export function sessionTokens(r: SessionReading): TokenTotals {
  const total = { ...r.fold.usage };
  for (const a of r.facts.subagents) {
    if (a.fold === undefined) continue;
    total.input += a.fold.usage.input;
    total.output += a.fold.usage.output;
    total.cacheCreation += a.fold.usage.cacheCreation;
    total.cacheRead += a.fold.usage.cacheRead;
  }
  return total;
}
