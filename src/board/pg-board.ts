import type { WorkItem, WorkItemInput, WorkItemsSummary } from "../contract/ecc/board.js";
import { laneStatus } from "../contract/ecc/lanes.js";
import type { PgBoardStore } from "../store/pg/board-store.js";
import { mergeWorkItem } from "../store/work-items.js";
import {
  CLAIM_WINDOW,
  type ClaimArgs,
  type ClaimResult,
  checkClaimable,
  checkUpsert,
  claimedItem,
  claimOwner,
  moveLane,
  notFound,
  nowIso,
  summaryOf,
  upsertId,
} from "./board.js";

// The board's rules (ecc-surfaces §4) over the PostgreSQL store: the same
// checks and writes as board.ts, each mutation one transaction. Row locks
// replace SQLite's whole-file write lock, so claims of different items run
// side by side while two claims of one item are serialised.

/** Claim an explicit item (its row locked FOR UPDATE) or the best unassigned
 * open one (candidates locked SKIP LOCKED); the same rules as on SQLite. */
export async function claimWorkItemPg(store: PgBoardStore, args: ClaimArgs): Promise<ClaimResult> {
  const owner = claimOwner(args);
  return store.write(async (items) => {
    let target: WorkItem | undefined;
    if (args.id !== undefined) {
      target = await items.get(args.id, true);
      if (target === undefined) throw notFound(args.id);
      checkClaimable(target, owner);
    } else {
      target = await items.claimCandidate(CLAIM_WINDOW);
      if (target === undefined) return { claimed: false, reason: "no-unassigned-open-items" };
    }
    return { claimed: true, item: await items.put(claimedItem(target, owner, args)) };
  });
}

export async function moveWorkItemPg(
  store: PgBoardStore,
  id: string,
  laneName: unknown,
): Promise<{ moved: true; item: WorkItem }> {
  const lane = moveLane(id, laneName);
  return store.write(async (items) => {
    const existing = await items.get(id, true);
    if (existing === undefined) throw notFound(id);
    const item = await items.put({ ...existing, status: laneStatus(lane), updatedAt: nowIso() });
    return { moved: true, item };
  });
}

/** Create or merge an item (an item's `sessionId` is kept as given: sessions
 * belong to each instance, and the shared board has no table of them). */
export async function upsertWorkItemPg(
  store: PgBoardStore,
  input: WorkItemInput,
): Promise<WorkItem> {
  const id = upsertId(input);
  return store.write(async (items) => {
    const existing = await items.get(id, true);
    checkUpsert(id, existing, input);
    return items.put(mergeWorkItem({ ...input, id }, existing, nowIso()));
  });
}

/** The board summary over one snapshot: counts over all items, the `limit`
 * most recent. */
export async function boardSummaryPg(
  store: PgBoardStore,
  limit: number,
): Promise<WorkItemsSummary> {
  return store.read(async (items) => summaryOf(await items.counts(), await items.recent(limit)));
}

/** One board mutation by name, as the control-pane API and the CLI ask. */
export async function mutatePg(
  store: PgBoardStore,
  action: "claim" | "move" | "upsert",
  args: Record<string, unknown>,
): Promise<unknown> {
  if (action === "claim") return claimWorkItemPg(store, args as unknown as ClaimArgs);
  if (action === "move") return moveWorkItemPg(store, args.id as string, args.lane);
  return upsertWorkItemPg(store, args as WorkItemInput);
}
