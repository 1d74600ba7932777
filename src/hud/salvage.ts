import { existsSync } from "node:fs";
import type { RunOptions } from "../probes/exec.js";
import { type GitFacts, git, parseStatus } from "../probes/git.js";
import type { MirroredSession } from "../store/ecc-sessions.js";

// The HUD's stale-salvage queue (ecc-surfaces §1.3 `queueState`): worktrees
// of this repository whose session went quiet — lost, or not seen for a
// while — leaving work nobody merged: commits the base branch lacks, or
// uncommitted changes. Each is one entry, so an operator can pick it up
// before the worktree is cleaned away.

/** Quiet sessions looked at per run (each costs two git calls). */
const MAX_CANDIDATES = 8;

export interface SalvageItem {
  /** ECC's field: no pull request is known for a worktree (§1.4 null). */
  sourcePullRequest: number | null;
  status: "stale";
  sessionId: string;
  branch: string | null;
  worktree: string;
  /** Commits on the worktree's HEAD that the base branch lacks; null when
   * that could not be counted. */
  aheadCommits: number | null;
  dirty: boolean | null;
  /** ISO: when the session was last seen. */
  lastSeenAt: string;
}

/** When a mirrored session was last known to be doing something (Unix ms). */
function lastSeen(s: MirroredSession): number | undefined {
  return s.last_seen_at ?? s.stopped_at ?? s.connected_at;
}

/**
 * The queue for the repository `facts` describes, from the sessions the
 * instance mirrored. `quietMs`: how long a session that is not connected
 * must have been quiet. Undefined when the sessions cannot be read.
 */
export async function staleSalvageQueue(
  facts: GitFacts,
  sessions: MirroredSession[] | undefined,
  now: number,
  quietMs: number,
  options: RunOptions = {},
): Promise<SalvageItem[] | undefined> {
  if (sessions === undefined) return undefined;
  // The base is what the main worktree has checked out (listed first by git).
  const base = facts.worktrees.find((w) => !w.bare)?.branch ?? null;
  const busy = new Set(sessions.filter((s) => s.state === "active").map((s) => s.cwd));
  const byWorktree = new Map<string, MirroredSession>();
  for (const s of sessions) {
    const seen = lastSeen(s);
    if (s.state === "active" || s.cwd === undefined || seen === undefined) continue;
    if (s.repo_root !== facts.mainRoot || now - seen < quietMs || busy.has(s.cwd)) continue;
    const kept = byWorktree.get(s.cwd);
    if (kept === undefined || (lastSeen(kept) ?? 0) < seen) byWorktree.set(s.cwd, s);
  }
  const candidates = [...byWorktree.values()]
    .filter((s) => existsSync(s.cwd!))
    .sort((a, b) => (lastSeen(b) ?? 0) - (lastSeen(a) ?? 0))
    .slice(0, MAX_CANDIDATES);
  const items = await Promise.all(
    candidates.map(async (s): Promise<SalvageItem | undefined> => {
      const cwd = s.cwd!;
      const [status, ahead] = await Promise.all([
        git(cwd, ["status", "--porcelain=v2", "--branch"], options),
        base === null
          ? Promise.resolve(undefined)
          : git(cwd, ["rev-list", "--count", `${base}..HEAD`], options),
      ]);
      const parsed = status.ok ? parseStatus(status.stdout) : undefined;
      const count = ahead?.ok ? Number.parseInt(ahead.stdout.trim(), 10) : Number.NaN;
      const aheadCommits = Number.isNaN(count) ? null : count;
      const dirty = parsed?.dirty ?? null;
      if (dirty !== true && (aheadCommits ?? 0) === 0) return undefined;
      return {
        sourcePullRequest: null,
        status: "stale",
        sessionId: s.sid,
        branch: parsed?.branch ?? s.branch ?? null,
        worktree: cwd,
        aheadCommits,
        dirty,
        lastSeenAt: new Date(lastSeen(s)!).toISOString(),
      };
    }),
  );
  return items.filter((i): i is SalvageItem => i !== undefined);
}
