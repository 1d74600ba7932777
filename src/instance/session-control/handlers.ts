import { resolve } from "node:path";
import { loadConfig } from "../../config/config.js";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import { utf8Length } from "../../contract/frames.js";
import type { InstanceId } from "../../contract/identifiers.js";
import type { SessionSearchHit } from "../../contract/session-control.js";
import { tmuxPane } from "../../harness/claude/session-files.js";
import {
  findHarnessProcess,
  type HarnessProcess,
  readEnvironment,
  STOP_TIMINGS,
  type StopTimings,
  stopProcess,
} from "../../harness/session-process.js";
import { typeLine } from "../../harness/tmux.js";
import { compileSearch, type FoundSession } from "../../harness/transcript-search.js";
import { configFile } from "../../state/paths.js";
import type { Logger } from "../../util/logger.js";
import type { Handlers } from "../dispatch.js";
import type { SearchEngine } from "../search/engine.js";
import type { HarnessKind, Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import { DEFAULT_SEARCH_BUDGET_MS, SessionSearches } from "./session-search.js";

// Controls that act on a session's harness process (contract §4.3.3):
// session_kill, session_env_read, session_rename (capability `terminal`), and
// session_search over the config home's transcripts. Every one is the
// person's (the attribute table says so) and finds the process itself, at the
// moment it acts, from the harness's own files (harness/session-process.ts).

/** Room left in a reply frame for the envelope around the hits. */
const SEARCH_REPLY_BYTES = MAX_FRAME_BYTES - 4096;

/** What the session controls use. */
export interface SessionControlDeps {
  instanceId: InstanceId;
  log: Logger;
  sessions: Sessions;
  /** Which sessions run, from the harness's files; `fresh()` before acting. */
  presence: Pick<Presence, "fresh">;
  /** The harness config home whose transcript tree transcripts must be in. */
  configHome: string;
  /** The harness whose config home it is. */
  harness: HarnessKind;
  /** The instance's environment (ccmsg's config file, tools on PATH). */
  env: NodeJS.ProcessEnv;
  search: SearchEngine;
  /** Started with --test-hooks: the environment may shorten a stop's graces. */
  testHooks?: boolean;
}

export function sessionControlHandlers(s: SessionControlDeps): Handlers {
  const searches = new SessionSearches(s.harness, s.configHome, searchBudget(s), s.log, s.search);
  const timings = stopTimings(s);

  /** The running harness process of `sid`, proven to be the session's — read
   * fresh — or `session_not_found` saying what was looked at. */
  async function harnessProcess(sid: string): Promise<HarnessProcess> {
    const found = await findHarnessProcess(s.harness, s.configHome, sid);
    if (!found.found) throw contractError("session_not_found", found.why);
    // A state file naming this very process names no session to act on.
    if (found.process.pid === process.pid)
      throw contractError("session_not_found", `session ${sid}'s state file names the instance`);
    return found.process;
  }

  return {
    async session_kill({ sid, force }) {
      // Presence first (harness.md §5.1): the registry knows the session
      // before its stop is declared.
      await s.presence.fresh();
      const target = await harnessProcess(sid);
      s.sessions.declareStopping(sid, "person");
      const { terminated, signals } = await stopProcess(target, force === true, timings);
      s.log.info({ sid, pid: target.pid, signals, terminated }, "session_kill");
      // Its loss shows on `peers` before the reply does.
      if (terminated) await s.presence.fresh();
      return { terminated };
    },

    async session_env_read({ sid }) {
      const target = await harnessProcess(sid);
      const env = await readEnvironment(target);
      if (env === undefined)
        throw contractError(
          "session_not_found",
          `the process of session ${sid} (${target.pid}) ended while its environment was read`,
        );
      if (env === "too large")
        throw contractError(
          "internal_error",
          `the environment of process ${target.pid} does not fit a reply frame`,
        );
      return { pid: target.pid, instance: s.instanceId, env };
    },

    async session_rename({ sid, title }) {
      const trimmed = title.trim();
      if (trimmed === "") throw contractError("invalid_args", "/title: only whitespace");
      const target = await harnessProcess(sid);
      const pane = target.row?.tmux === undefined ? undefined : tmuxPane(target.row.tmux);
      if (pane === undefined)
        throw contractError(
          "capability_unavailable",
          `session ${sid} runs in no terminal this instance knows (its harness names no tmux pane), so it cannot be renamed`,
        );
      // Claude Code's own command (`/rename <name>`, Claude Code 2.1): the
      // harness stores the title and shows it on `agents` once it took it.
      const typed = await typeLine(
        { pane, socket: target.row?.tmuxSocket },
        `/rename ${trimmed}`,
        s.env,
      );
      if (!typed.ok)
        throw contractError(
          "internal_error",
          `tmux could not type into pane ${pane}: ${typed.stderr.trim() || typed.failure}`,
        );
      s.log.info({ sid, pane }, "session_rename");
      return { terminal_id: pane, instance: s.instanceId, title: trimmed };
    },

    async session_search(args) {
      const { query, case_sensitive, regex, target_user, target_agent, cwd, sid } = args;
      const request = { query, case_sensitive, regex, target_user, target_agent, cwd, sid };
      const checked = compileSearch({ ...request, modified_within_ms: args.modified_within_ms });
      if (!checked.ok) throw contractError("invalid_args", checked.why);
      // This instance holds one config home's transcripts.
      const dirs = args.config_dirs;
      if (dirs !== undefined && !dirs.some((d) => resolve(d) === resolve(s.configHome)))
        return { hits: [], truncated: false };
      let outcome: Awaited<ReturnType<SessionSearches["run"]>>;
      try {
        outcome = await searches.run({ ...request, modified_within_ms: args.modified_within_ms });
      } catch (error) {
        s.log.error({ err: error }, "session_search failed");
        throw contractError("internal_error", `session_search failed: ${String(error)}`);
      }
      const hits = outcome.hits
        .sort((a, b) => b.updated_at - a.updated_at)
        .map((found) => searchHit(s, found));
      return fitHits(hits, outcome.truncated);
    },
  };
}

/** ccmsg's config decides the search budget; a config that cannot be read
 * keeps the default (and the log says why). */
/** Test hook: CCMSG_TEST_STOP_GRACE_MS is the interrupt's and the terminate's
 * grace, so a test of the whole ladder does not wait 5 s per stop. */
function stopTimings(s: SessionControlDeps): StopTimings {
  const ms = s.testHooks ? Number(s.env.CCMSG_TEST_STOP_GRACE_MS) || undefined : undefined;
  return ms === undefined ? STOP_TIMINGS : { ...STOP_TIMINGS, interruptMs: ms, terminateMs: ms };
}

function searchBudget(s: SessionControlDeps): number {
  try {
    return loadConfig(configFile(undefined, s.env)).search_budget_ms ?? DEFAULT_SEARCH_BUDGET_MS;
  } catch (error) {
    s.log.error({ err: error }, "config not read: session_search keeps its default budget");
    return DEFAULT_SEARCH_BUDGET_MS;
  }
}

/** A found transcript as the contract's hit, completed by what the registry
 * knows of the session (its repository and worktree, its stated title). */
function searchHit(s: SessionControlDeps, found: FoundSession): SessionSearchHit {
  const { sid, file, created_at, updated_at, size, matches } = found;
  const hit: SessionSearchHit = {
    sid,
    instance: s.instanceId,
    config_dir: s.configHome,
    file,
    created_at,
    updated_at,
    size,
    matches,
  };
  const at = s.sessions.lookup(sid);
  const meta = at?.kind === "live" ? at.session.meta : at?.row;
  const title = found.title ?? meta?.title;
  if (found.cwd !== undefined) hit.cwd = found.cwd;
  else if (meta?.cwd) hit.cwd = meta.cwd;
  if (meta?.repo !== undefined && /^[^/\s]+\/[^/\s]+$/.test(meta.repo)) hit.repo = meta.repo;
  if (meta?.ws) hit.ws = meta.ws;
  if (title) hit.title = title;
  if (found.model !== undefined) hit.model = found.model;
  if (found.effort !== undefined) hit.effort = found.effort;
  return hit;
}

/** The hits that fit one reply frame, newest first; any left out make the
 * answer `truncated`. */
function fitHits(
  hits: SessionSearchHit[],
  truncated: boolean,
): { hits: SessionSearchHit[]; truncated: boolean } {
  let total = utf8Length(JSON.stringify({ hits: [], truncated }));
  const out: SessionSearchHit[] = [];
  for (const hit of hits) {
    const bytes = utf8Length(JSON.stringify(hit)) + 1;
    if (total + bytes > SEARCH_REPLY_BYTES) return { hits: out, truncated: true };
    total += bytes;
    out.push(hit);
  }
  return { hits: out, truncated };
}
