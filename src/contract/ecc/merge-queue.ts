// The merge queue's classes (ecc-surfaces §1.5 `mergeQueue`: "merge-ready,
// blocked and waiting-on-checks items"), derived from what GitHub says of a
// pull request — never stored, so every surface classifies the same way.

export const MERGE_CLASSES = ["ready", "blocked", "waiting-check"] as const;
export type MergeClass = (typeof MERGE_CLASSES)[number];

/** A PR's checks folded to one state, from `statusCheckRollup`. */
export type ChecksState = "pass" | "fail" | "pending" | "none";

/** The facts a classification reads (the board's GitHub metadata). */
export interface MergeFacts {
  isDraft?: unknown;
  mergeStateStatus?: unknown;
  reviewDecision?: unknown;
  checks?: unknown;
  /** A hand-fed gate: used as the class when it names one. */
  mergeGate?: unknown;
}

/** CheckRun conclusions that fail a PR (GitHub's `CheckConclusionState`). */
const FAILING_CONCLUSIONS = new Set([
  "FAILURE",
  "TIMED_OUT",
  "CANCELLED",
  "ACTION_REQUIRED",
  "STARTUP_FAILURE",
  "STALE",
]);

/**
 * Fold `statusCheckRollup` (`gh pr list --json statusCheckRollup`): CheckRun
 * entries carry `status` + `conclusion`, StatusContext entries a `state`. Any
 * failure fails; otherwise anything unfinished is pending.
 */
export function checksState(rollup: unknown): ChecksState {
  if (!Array.isArray(rollup) || rollup.length === 0) return "none";
  let pending = false;
  for (const c of rollup as Record<string, unknown>[]) {
    if (c === null || typeof c !== "object") continue;
    if (c.__typename === "StatusContext" || (c.state !== undefined && c.status === undefined)) {
      const state = String(c.state ?? "").toUpperCase();
      if (state === "FAILURE" || state === "ERROR") return "fail";
      if (state !== "SUCCESS") pending = true;
      continue;
    }
    const status = String(c.status ?? "").toUpperCase();
    const conclusion = String(c.conclusion ?? "").toUpperCase();
    if (status !== "COMPLETED") pending = true;
    else if (FAILING_CONCLUSIONS.has(conclusion)) return "fail";
  }
  return pending ? "pending" : "pass";
}

/**
 * The class of a queued item and why, or null when nothing says (§1.4: never
 * ready by default). Order matters: what a person must fix (draft, conflicts,
 * requested changes, failing checks) blocks before running checks wait, and
 * a required review blocks even when checks pass; only GitHub's own "can
 * merge" states (CLEAN, HAS_HOOKS, UNSTABLE with passing required checks)
 * are ready.
 */
export function mergeClass(f: MergeFacts): { class: MergeClass; reason: string } | null {
  const state = typeof f.mergeStateStatus === "string" ? f.mergeStateStatus.toUpperCase() : "";
  const review = typeof f.reviewDecision === "string" ? f.reviewDecision.toUpperCase() : "";
  const checks = typeof f.checks === "string" ? (f.checks as ChecksState) : undefined;
  if (state === "" && review === "" && checks === undefined && f.isDraft === undefined) {
    const gate = typeof f.mergeGate === "string" ? f.mergeGate.toLowerCase() : "";
    return (MERGE_CLASSES as readonly string[]).includes(gate)
      ? { class: gate as MergeClass, reason: "set by hand" }
      : null;
  }
  if (f.isDraft === true || state === "DRAFT") return { class: "blocked", reason: "draft" };
  if (state === "DIRTY") return { class: "blocked", reason: "conflicts with its base" };
  if (review === "CHANGES_REQUESTED") return { class: "blocked", reason: "changes requested" };
  if (checks === "fail") return { class: "blocked", reason: "checks failing" };
  if (checks === "pending") return { class: "waiting-check", reason: "checks running" };
  if (review === "REVIEW_REQUIRED") return { class: "blocked", reason: "review required" };
  switch (state) {
    case "CLEAN":
    case "HAS_HOOKS":
    case "UNSTABLE":
      return { class: "ready", reason: review === "APPROVED" ? "approved" : "mergeable" };
    case "BEHIND":
      return { class: "blocked", reason: "behind its base" };
    case "BLOCKED":
      return { class: "blocked", reason: "blocked by branch protection" };
    default:
      // UNKNOWN: GitHub has not computed mergeability yet.
      return null;
  }
}
