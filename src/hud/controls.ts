import { SESSION_CONTROLS, type SessionControl } from "../contract/ecc/controls.js";
import type { BlockedControl } from "../contract/ecc/hud.js";
import { type GitProbe, gitUnavailableReason } from "../probes/git.js";
import { type GhState, ghUnavailableReason } from "../probes/github.js";

// The one place that decides which session controls this machine can carry
// out for a target, and why not. The HUD's `sessionControls` and the
// `ccmsg session …` / `ccmsg queue …` commands both ask here, so a control the
// HUD lists as supported works, and a blocked one fails with the same reason.

/** What the decision rests on, all probed for real on this machine. */
export interface ControlFacts {
  /** The target session; null when none is known. */
  target: string | null;
  /** The session this process runs inside; null for a person's shell. */
  caller: string | null;
  harness: string;
  /** The target's directory, and whether it is really the session's. */
  cwd: string;
  cwdKnown: boolean;
  git: GitProbe;
  /** Only `pr` needs it; undefined when not probed. */
  gh?: GhState;
  /** Whether the `claude` CLI is on PATH. */
  claude: boolean;
  /** Whether the `codex` CLI is on PATH. */
  codex: boolean;
  /** Whether the state store (work items, check runs) exists. */
  store: boolean;
  /** The target's running harness process (its pid), or why there is none
   * to signal; undefined when not looked for. */
  process?: { pid: number } | { none: string };
}

export const REASONS = {
  noSession: "no session identity",
  notLookedFor: "its harness process was not looked for",
  noClaude: "claude CLI not installed",
  noCodex: "codex CLI not installed",
  notClaudeSession: "not a Claude Code or Codex session",
  noCwd: "the session's directory is unknown",
  detached: "no branch checked out (detached HEAD)",
  noStore: "no work items recorded (no state store yet)",
} as const;

/** Why a control cannot be carried out now, or undefined when it can. */
export function blockedReason(control: SessionControl, f: ControlFacts): string | undefined {
  const gitReason = f.git.state === "ok" ? undefined : gitUnavailableReason(f.git.state, f.cwd);
  switch (control) {
    case "status":
      return undefined;
    case "create":
    case "diff":
      return gitReason;
    case "conflictQueue":
      // Conflicts come from the worktrees and from the board's PRs: either
      // source is enough to answer.
      if (gitReason === undefined || f.store) return undefined;
      return `${gitReason}; ${REASONS.noStore}`;
    case "mergeQueue":
      return f.store ? undefined : REASONS.noStore;
    case "pr":
      if (gitReason !== undefined) return gitReason;
      if (f.gh === undefined || f.gh !== "ok") return ghUnavailableReason(f.gh ?? "not-installed");
      if (f.git.state === "ok" && f.git.branch === null) return REASONS.detached;
      return undefined;
    case "stop":
      // Inside the session, stopping is declaring itself done; anyone else
      // signals its harness process, which must be found (DR-0029).
      if (f.target === null) return REASONS.noSession;
      if (f.caller === f.target) return undefined;
      if (f.process === undefined) return REASONS.notLookedFor;
      return "pid" in f.process ? undefined : f.process.none;
    case "resume":
      if (f.target === null) return REASONS.noSession;
      if (f.process !== undefined && "pid" in f.process)
        return `the session still runs (process ${f.process.pid}): stop it first`;
      if (f.harness === "codex") {
        if (!f.cwdKnown) return REASONS.noCwd;
        return f.codex ? undefined : REASONS.noCodex;
      }
      if (f.harness !== "claude-code" && f.harness !== "unknown") return REASONS.notClaudeSession;
      if (!f.cwdKnown) return REASONS.noCwd;
      return f.claude ? undefined : REASONS.noClaude;
  }
}

/** The HUD's `sessionControls`: each control in exactly one of the lists. */
export function decideControls(f: ControlFacts): {
  supported: SessionControl[];
  blocked: BlockedControl[];
} {
  const supported: SessionControl[] = [];
  const blocked: BlockedControl[] = [];
  for (const control of SESSION_CONTROLS) {
    const reason = blockedReason(control, f);
    if (reason === undefined) supported.push(control);
    else blocked.push({ control, reason });
  }
  return { supported, blocked };
}
