// The work board's pure rules: lanes, priority ranking, and how an item shows.
// No schema library here, so commands that only read the board load little.

/** Board columns, in display order. */
export const LANES = ["ready", "running", "blocked", "done"] as const;
export type Lane = (typeof LANES)[number];

/** Statuses that map to a lane other than `ready`; anything else (including
 * `open` and statuses nobody listed) is ready. */
const LANE_OF_STATUS: Readonly<Record<string, Lane>> = {
  done: "done",
  closed: "done",
  resolved: "done",
  merged: "done",
  cancelled: "done",
  blocked: "blocked",
  "needs-review": "blocked",
  failed: "blocked",
  stalled: "blocked",
  running: "running",
  "in-progress": "running",
  active: "running",
  working: "running",
};

/** The lane of a status — derived, never stored, so a status written by any
 * tool lands in the same column everywhere. */
export function workItemLane(status: string): Lane {
  return LANE_OF_STATUS[status.trim().toLowerCase()] ?? "ready";
}

/** The status a move into a lane writes. */
export function laneStatus(lane: Lane): string {
  return lane === "ready" ? "open" : lane;
}

/** Every status that is done (lower-case), for stores that filter in SQL. */
export const DONE_STATUSES: readonly string[] = Object.keys(LANE_OF_STATUS).filter(
  (s) => LANE_OF_STATUS[s] === "done",
);

/** Done statuses: refused by claim, counted as closed by status. */
export function isDoneStatus(status: string): boolean {
  return workItemLane(status) === "done";
}

/** The priorities a write may name — the ones claim ranking knows. Items
 * written by other tools may carry others; those rank as normal. */
export const PRIORITIES = ["critical", "high", "urgent", "medium", "normal", "low"] as const;

/** Claim ranking: critical 0; high/urgent 1; medium/normal/unknown 2; low 3. */
export function priorityRank(priority: string | null | undefined): number {
  switch ((priority ?? "").trim().toLowerCase()) {
    case "critical":
      return 0;
    case "high":
    case "urgent":
      return 1;
    case "low":
      return 3;
    default:
      return 2;
  }
}

/** The board's counts, as every surface reports them: per lane, and the
 * classes ECC names — open is everything not done, so blocked items are
 * counted as open **and** as blocked (ecc-surfaces §2.2). */
export interface BoardCounts {
  total: number;
  open: number;
  blocked: number;
  done: number;
  kanban: Record<Lane, number>;
}

/** Counts from `(status, n)` groups — the one place lanes become numbers, for
 * the board, the snapshot and `status` alike. */
export function boardCounts(groups: Iterable<readonly [string, number]>): BoardCounts {
  const kanban = { ready: 0, running: 0, blocked: 0, done: 0 };
  let total = 0;
  for (const [status, n] of groups) {
    kanban[workItemLane(status)] += n;
    total += n;
  }
  return { total, open: total - kanban.done, blocked: kanban.blocked, done: kanban.done, kanban };
}

/** The counts as one sentence that visibly adds up (open + done = all; the
 * blocked ones are a part of open). `mark` formats each number (Markdown
 * wraps them in back-ticks). */
export function countsSentence(
  c: Pick<BoardCounts, "total" | "open" | "blocked" | "done">,
  mark: (n: number) => string = String,
): string {
  return `${mark(c.open)} open (${mark(c.blocked)} of them blocked), ${mark(c.done)} done — ${mark(c.total)} in all`;
}

export const ASSIGNEE_KINDS = ["agent", "human"] as const;
export type AssigneeKind = (typeof ASSIGNEE_KINDS)[number];
