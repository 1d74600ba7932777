import type { SessionWorker } from "../contract/ecc/session.js";
import { str } from "../harness/claude/statusline-input.js";
import { agentState, isTeammate, ms, spawningCall } from "../harness/status-snapshot.js";
import type { SessionReading } from "./session-reading.js";

// A session's workers — its sub-agents and teammates, from the agent tree —
// as ECC's `ecc.session.v1` workers (session-inspect) and, mapped from those,
// the HUD's `activeAgents` (ecc-surfaces §1.3: id, state, branch, worktree,
// intent.objective, artifacts.handoffFile). One list, so both agree.

/** Where the session itself works: a sub-agent without a worktree of its own
 * runs there. */
export interface SessionPlace {
  branch: string | null;
  worktree: string | null;
}

/** The health of a worker, from its state. */
function workerHealth(state: string): string {
  if (state === "failed" || state === "error" || state === "killed") return "failed";
  if (state === "unknown") return "unknown";
  return "healthy";
}

/** The session's workers: running ones first, then the most recently active. */
export function sessionWorkers(r: SessionReading, place: SessionPlace): SessionWorker[] {
  const rows = r.facts.subagents.map((a) => {
    const meta = a.meta;
    const call = spawningCall(r.fold, a);
    const state = agentState(call, meta);
    const description = str(meta?.description) ?? call?.description ?? null;
    const artifacts: Record<string, unknown> = {};
    const path = r.agentPaths.get(a.agentId);
    if (path !== undefined) artifacts.transcriptPath = path;
    const type = str(meta?.agentType) ?? call?.subagentType;
    if (type !== undefined) artifacts.agentType = type;
    if (call !== undefined) artifacts.toolUseId = call.toolUseId;
    const worker: SessionWorker = {
      id: a.agentId,
      label: str(meta?.name) ?? description,
      state,
      health: workerHealth(state),
      branch: str(meta?.worktreeBranch) ?? place.branch,
      worktree: str(meta?.worktreePath) ?? str(meta?.cwd) ?? place.worktree,
      runtime: {
        kind: isTeammate(a) ? "claude-teammate" : "claude-subagent",
        command: null,
        pid: null,
        active: state === "unknown" ? null : state === "running",
        dead: null,
      },
      intent: { objective: description, seedPaths: [] },
      outputs: { summary: [], validation: [], remainingRisks: [] },
      artifacts,
    };
    const activity = ms(a.fold?.lastEventAt) ?? a.mtimeMs ?? 0;
    return { worker, activity };
  });
  rows.sort(
    (x, y) =>
      Number(y.worker.state === "running") - Number(x.worker.state === "running") ||
      y.activity - x.activity,
  );
  return rows.map((r) => r.worker);
}

/** The HUD's `activeAgents` entry of a worker; what is unknown is null. */
export function hudAgent(w: SessionWorker): {
  id: string;
  state: string;
  branch: string | null;
  worktree: string | null;
  objective: string | null;
  handoffPath: string | null;
} {
  const handoff = w.artifacts.handoffFile;
  return {
    id: w.id,
    state: w.state,
    branch: w.branch,
    worktree: w.worktree,
    objective: w.intent.objective,
    handoffPath: typeof handoff === "string" ? handoff : null,
  };
}
