import { type Lane, workItemLane } from "../contract/ecc/lanes.js";
import { type MergeClass, mergeClass } from "../contract/ecc/merge-queue.js";
import type { Db } from "../store/database.js";
import { WorkItemsStore } from "../store/work-items.js";

// The work board's contribution to the HUD: how many items are blocked or
// waiting for review (risk), which items wait to merge, and which PRs GitHub
// reports as conflicting. Counts cover the whole board, as `ccmsg status`
// does; the listed queues keep the most recently updated items.

/** Listed queue entries are capped; counts are not. */
export const QUEUE_LIMIT = 50;
/** How many merge-gated items are read before the lane filter. */
const SCAN_LIMIT = 500;

export interface MergeQueueItem {
  kind: "work-item";
  id: string;
  title: string;
  status: string;
  lane: Lane;
  /** The item's merge gate (`mergeGate`, `mergeGateStatus` or GitHub's
   * `mergeStateStatus`, as the board's snapshot reads it). */
  mergeGate: string;
  url: string | null;
  /** `ready`, `blocked` or `waiting-check`, from the PR's review decision,
   * checks and merge state (merge-queue.ts); null when nothing says. */
  classification: MergeClass | null;
  /** Why, in a few words ("checks running", "changes requested"). */
  reason: string | null;
}

export interface ConflictedItem {
  kind: "work-item";
  id: string;
  title: string;
  mergeStateStatus: string;
  url: string | null;
}

export interface WorkSignals {
  blocked: number;
  needsReview: number;
  mergeQueue: MergeQueueItem[];
  conflicted: ConflictedItem[];
}

interface GatedRow {
  id: string;
  title: string;
  status: string;
  url: string | null;
  gate: string | null;
  merge_state: string | null;
  gate_set: string | null;
  is_draft: number | null;
  review: string | null;
  checks: string | null;
}

/**
 * Read the board, classifying statuses with the board's own lane rule.
 *
 * The merge queue is every item in the `running` or `blocked` lane that
 * carries a merge gate — the PRs `work-items sync-github` recorded, and any
 * item a tool marked with one. The conflict list is every item not done whose
 * `mergeStateStatus` is `DIRTY` (GitHub: the PR conflicts with its base).
 */
export function readWorkSignals(db: Db): WorkSignals {
  const counts = new WorkItemsStore(db).counts();
  let blocked = 0;
  let needsReview = 0;
  for (const [status, n] of counts.byStatus) {
    if (workItemLane(status) === "blocked") blocked += n;
    if (status.trim().toLowerCase() === "needs-review") needsReview += n;
  }
  const rows = db
    .prepare(
      `SELECT id, title, status, url,
         COALESCE(json_extract(metadata, '$.mergeGate'), json_extract(metadata, '$.mergeGateStatus'),
                  json_extract(metadata, '$.mergeStateStatus')) AS gate,
         json_extract(metadata, '$.mergeStateStatus') AS merge_state,
         COALESCE(json_extract(metadata, '$.mergeGate'), json_extract(metadata, '$.mergeGateStatus')) AS gate_set,
         json_extract(metadata, '$.isDraft') AS is_draft,
         json_extract(metadata, '$.reviewDecision') AS review,
         json_extract(metadata, '$.checks') AS checks
       FROM work_items
       WHERE json_type(metadata) = 'object' AND gate IS NOT NULL
       ORDER BY updated_at DESC, id DESC LIMIT ?`,
    )
    .all(SCAN_LIMIT) as GatedRow[];
  const mergeQueue: MergeQueueItem[] = [];
  const conflicted: ConflictedItem[] = [];
  for (const r of rows) {
    const lane = workItemLane(r.status);
    if (lane === "done") continue;
    if (typeof r.gate === "string" && r.gate !== "" && (lane === "running" || lane === "blocked"))
      if (mergeQueue.length < QUEUE_LIMIT) {
        const c = mergeClass({
          // json_extract gives a JSON boolean as 0/1.
          isDraft: r.is_draft === null ? undefined : r.is_draft === 1,
          mergeStateStatus: r.merge_state ?? undefined,
          reviewDecision: r.review ?? undefined,
          checks: r.checks ?? undefined,
          mergeGate: r.gate_set ?? undefined,
        });
        mergeQueue.push({
          kind: "work-item",
          id: r.id,
          title: r.title,
          status: r.status,
          lane,
          mergeGate: r.gate,
          url: r.url,
          classification: c?.class ?? null,
          reason: c?.reason ?? null,
        });
      }
    if (typeof r.merge_state === "string" && r.merge_state.toUpperCase() === "DIRTY")
      if (conflicted.length < QUEUE_LIMIT)
        conflicted.push({
          kind: "work-item",
          id: r.id,
          title: r.title,
          mergeStateStatus: r.merge_state,
          url: r.url,
        });
  }
  return { blocked, needsReview, mergeQueue, conflicted };
}
