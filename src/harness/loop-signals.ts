import type { PendingTool, SessionFold, WakeCall } from "./fold-state.js";

// Attention signals of a long-running session, from its fold (ECC's
// loop-status, ecc-surfaces §2.3): a shell call running past a threshold, a
// scheduled wake-up that is overdue, lines that do not parse. Shared by
// `ccmsg loop-status`, the HUD (stale calls) and `session_status`.

/** ECC's default age after which a pending Bash call is flagged. */
export const DEFAULT_BASH_TIMEOUT_SECONDS = 1800;
/** ECC's default grace factor for a scheduled wake-up. */
export const DEFAULT_WAKE_GRACE_MULTIPLIER = 2;

export interface LoopThresholds {
  /** Unix ms. */
  now: number;
  bashTimeoutSeconds: number;
  wakeGraceMultiplier: number;
}

export type LoopSignalType =
  | "schedule_wakeup_overdue"
  | "pending_bash_tool_result"
  | "transcript_parse_errors";

export interface LoopSignal {
  type: LoopSignalType;
  message: string;
  toolUseId?: string;
  ageSeconds?: number;
  dueAt?: string;
  count?: number;
}

/** Whole seconds from an ISO time to `now`; null when the time is unknown. */
export function ageSeconds(startedAt: string | null, now: number): number | null {
  if (startedAt === null) return null;
  const t = Date.parse(startedAt);
  return Number.isNaN(t) ? null : Math.max(0, Math.floor((now - t) / 1000));
}

/** Pending calls, oldest first. */
export function pendingCalls(fold: SessionFold): PendingTool[] {
  return Object.values(fold.pending).sort((a, b) =>
    (a.startedAt ?? "").localeCompare(b.startedAt ?? ""),
  );
}

/** Shell calls pending for longer than the threshold. */
export function staleShellCalls(
  fold: SessionFold,
  now: number,
  thresholdSeconds: number,
): PendingTool[] {
  return pendingCalls(fold).filter((c) => {
    const age = ageSeconds(c.startedAt, now);
    return c.shell && age !== null && age > thresholdSeconds;
  });
}

/** When the latest wake-up was due (scheduled time + delay). */
export function wakeDueAt(wake: WakeCall): string | null {
  const t = Date.parse(wake.scheduledAt);
  return Number.isNaN(t) ? null : new Date(t + wake.delaySeconds * 1000).toISOString();
}

/** The signals of one session, in ECC's order of urgency. */
export function loopSignals(fold: SessionFold, t: LoopThresholds): LoopSignal[] {
  const out: LoopSignal[] = [];
  const wake = fold.wake;
  if (wake !== null) {
    const scheduled = Date.parse(wake.scheduledAt);
    const dueAt = wakeDueAt(wake);
    const graceEnd = scheduled + wake.delaySeconds * t.wakeGraceMultiplier * 1000;
    // Overdue: past the grace, and nothing from the assistant since it fell due.
    const progressed =
      dueAt !== null &&
      fold.lastAssistantAt !== null &&
      Date.parse(fold.lastAssistantAt) > Date.parse(dueAt);
    if (dueAt !== null && !Number.isNaN(graceEnd) && t.now > graceEnd && !progressed) {
      out.push({
        type: "schedule_wakeup_overdue",
        message: `the wake-up scheduled for ${dueAt} has not happened (${wake.reason ?? "no reason given"})`,
        toolUseId: wake.toolUseId,
        dueAt,
        ageSeconds: ageSeconds(dueAt, t.now) ?? 0,
      });
    }
  }
  for (const call of staleShellCalls(fold, t.now, t.bashTimeoutSeconds)) {
    const age = ageSeconds(call.startedAt, t.now) ?? 0;
    out.push({
      type: "pending_bash_tool_result",
      message: `${call.name} call has had no result for ${age}s: ${call.command ?? "(no command)"}`,
      toolUseId: call.toolUseId,
      ageSeconds: age,
    });
  }
  if (fold.parseErrors > 0)
    out.push({
      type: "transcript_parse_errors",
      message: `${fold.parseErrors} line${fold.parseErrors === 1 ? "" : "s"} of the transcript did not parse`,
      count: fold.parseErrors,
    });
  return out;
}

/** What an operator should do first about a session's signals; null when
 * nothing needs attention. */
export function recommendedAction(signals: LoopSignal[]): string | null {
  const first = signals[0];
  if (first === undefined) return null;
  switch (first.type) {
    case "schedule_wakeup_overdue":
      return "resume the session: its scheduled wake-up is overdue and it has made no progress since";
    case "pending_bash_tool_result":
      return "inspect the long-running shell call: stop it if it hangs, or raise --bash-timeout-seconds if it is expected";
    case "transcript_parse_errors":
      return "check the transcript for damaged lines (a crash mid-write, or another writer)";
  }
}
