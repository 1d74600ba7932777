import {
  boardRequestErrors,
  type WorkItem,
  WorkItemInput,
  type WorkItemsSummary,
} from "../contract/ecc/board.js";
import {
  ASSIGNEE_KINDS,
  type AssigneeKind,
  boardCounts,
  isDoneStatus,
  LANES,
  type Lane,
  laneStatus,
  priorityRank,
} from "../contract/ecc/lanes.js";
import { snapshotItem } from "../contract/ecc/snapshot-item.js";
import { type ContractError, contractError } from "../contract/errors.js";
import type { StateStore } from "../store/state-store.js";
import { type StatusCounts, WorkItemsStore } from "../store/work-items.js";
import { nodeCrypto } from "../util/lazy-builtins.js";

// The work board's rules (ecc-surfaces §4). Every mutation is one store
// transaction — read, check, write — taken with BEGIN IMMEDIATE, so a claim
// is atomic across every process sharing the file.

/** An invalid mutation: the caller's fault, `invalid_args`, answered 400 /
 * exit 1. */
export function invalid(msg: string): ContractError {
  return contractError("invalid_args", msg, { status: 400 });
}

/** The named item does not exist: `not_found`, HTTP 404 (ECC's control pane
 * answers 400; ccmsg says what happened — DR-0011). */
export function notFound(id: string): ContractError {
  return contractError("not_found", `work item ${id} not found`, { status: 404 });
}

/** An item's `sessionId` is a foreign key into ECC's `sessions` table: name
 * a session the store knows, or the write is refused (not a constraint
 * failure deep in SQLite). */
function checkSession(items: WorkItemsStore, sessionId: string | null | undefined): void {
  if (sessionId && !items.sessionKnown(sessionId))
    throw invalid(`unknown session ${sessionId}: an item's sessionId must name a known session`);
}

/** The claim rules (ecc-surfaces §4.3), for every write that sets an owner:
 * a done item cannot be taken, nor one someone else owns. */
export function checkClaimable(item: WorkItem, owner: string | null): void {
  if (isDoneStatus(item.status)) throw invalid(`work item ${item.id} is ${item.status}`);
  if (item.owner && item.owner !== owner) throw invalid(`already owned by ${item.owner}`);
}

/** How many recently updated items a claim without an id chooses among. */
export const CLAIM_WINDOW = 100;

export interface ClaimArgs {
  id?: string;
  owner: string;
  as?: string;
  sessionId?: string;
  status?: string;
}

export type ClaimResult =
  | { claimed: true; item: WorkItem }
  | { claimed: false; reason: "no-unassigned-open-items" };

export function nowIso(): string {
  return new Date().toISOString();
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...(value as object) }
    : {};
}

/**
 * Claim an explicit item, or the best unassigned open item (priority, then
 * newest) among the 100 most recently updated. Done items and items owned by
 * someone else are refused; the same owner may claim again.
 */
export function claimWorkItem(store: StateStore, args: ClaimArgs): ClaimResult {
  const owner = claimOwner(args);
  const items = new WorkItemsStore(store.db);
  return store.write(() => {
    let target: WorkItem | undefined;
    checkSession(items, args.sessionId);
    if (args.id !== undefined) {
      target = items.get(args.id);
      if (target === undefined) throw notFound(args.id);
      checkClaimable(target, owner);
    } else {
      target = claimChoice(items.recent(CLAIM_WINDOW));
      if (target === undefined) return { claimed: false, reason: "no-unassigned-open-items" };
    }
    return { claimed: true, item: items.put(claimedItem(target, owner, args)) };
  });
}

/** A claim's owner, trimmed; refuses a missing owner or a bad assignee kind
 * (every store applies the same checks before touching the board). */
export function claimOwner(args: ClaimArgs): string {
  const owner = args.owner?.trim();
  if (!owner) throw invalid("claim requires an owner");
  if (args.as !== undefined && !(ASSIGNEE_KINDS as readonly string[]).includes(args.as)) {
    throw invalid("as must be 'agent' or 'human'");
  }
  return owner;
}

/** The automatic claim's pick among recently updated items: unassigned and
 * open, best priority first; a stable sort keeps newest-first order among
 * equal priorities. */
export function claimChoice(recent: WorkItem[]): WorkItem | undefined {
  const open = recent.filter((i) => !i.owner && !isDoneStatus(i.status));
  return open.sort((a, b) => priorityRank(a.priority) - priorityRank(b.priority))[0];
}

/** The item as a claim writes it (ecc-surfaces §4.3). */
export function claimedItem(target: WorkItem, owner: string, args: ClaimArgs): WorkItem {
  const metadata = asObject(target.metadata);
  metadata.claimOwnerSource = "local";
  metadata.assigneeKind =
    (args.as as AssigneeKind | undefined) ??
    (metadata.assigneeKind as string | undefined) ??
    "human";
  return {
    ...target,
    owner,
    sessionId: args.sessionId ?? target.sessionId,
    status: args.status ?? "running",
    metadata,
    updatedAt: nowIso(),
  };
}

/** Move an item to a lane: `ready` writes status `open`, the others their
 * own name. */
export function moveWorkItem(
  store: StateStore,
  id: string,
  laneName: unknown,
): { moved: true; item: WorkItem } {
  const lane = moveLane(id, laneName);
  const items = new WorkItemsStore(store.db);
  return store.write(() => {
    const existing = items.get(id);
    if (existing === undefined) throw notFound(id);
    const item = items.put({ ...existing, status: laneStatus(lane), updatedAt: nowIso() });
    return { moved: true, item };
  });
}

/** A move's lane, trimmed and lower-cased; refuses a missing id or an
 * unknown lane. */
export function moveLane(id: unknown, laneName: unknown): Lane {
  if (typeof id !== "string" || id === "") throw invalid("move requires an id");
  const lane = typeof laneName === "string" ? laneName.trim().toLowerCase() : "";
  if (!(LANES as readonly string[]).includes(lane)) {
    throw invalid(`invalid lane: ${String(laneName)} (one of ${LANES.join(", ")})`);
  }
  return lane as Lane;
}

/**
 * Create an item or merge fields into one; only the given fields change. An
 * upsert is no back door around the board's verbs: changing an existing
 * item's owner obeys the claim rules, and a done item is reopened only by a
 * move (its status cannot be edited back to an open one here).
 */
export function upsertWorkItem(store: StateStore, input: WorkItemInput): WorkItem {
  const id = upsertId(input);
  const items = new WorkItemsStore(store.db);
  return store.write(() => {
    checkUpsert(id, items.get(id), input);
    checkSession(items, input.sessionId);
    return items.upsert({ ...input, id }, nowIso());
  });
}

/** An upsert's id (a new one when none is given), after checking the input's
 * shape. */
export function upsertId(input: WorkItemInput): string {
  const refused = boardRequestErrors(WorkItemInput, input);
  if (refused.length > 0) throw invalid(refused.join("; "));
  return input.id ?? `wi-${nodeCrypto().randomBytes(4).toString("hex")}`;
}

/** An upsert obeys the claim rules and cannot reopen a done item. */
export function checkUpsert(
  id: string,
  existing: WorkItem | undefined,
  input: WorkItemInput,
): void {
  if (existing === undefined && !input.title) throw invalid("a new work item needs a title");
  if (existing === undefined) return;
  if (input.owner !== undefined && input.owner !== existing.owner)
    checkClaimable(existing, input.owner);
  if (input.status !== undefined && isDoneStatus(existing.status) && !isDoneStatus(input.status)) {
    throw invalid(`work item ${id} is ${existing.status}; move it to a lane to reopen it`);
  }
}

/**
 * The board summary: counts over ALL items (never a truncated window, so the
 * lane counters match the board), the `limit` most recently updated items, and
 * the open items that still need an owner.
 */
export function boardSummary(store: StateStore, limit: number): WorkItemsSummary {
  const items = new WorkItemsStore(store.db);
  return store.read(() => summaryOf(items.counts(), items.recent(limit)));
}

/** The summary from all-item counts and the most recent items. */
export function summaryOf(counts: StatusCounts, items: WorkItem[]): WorkItemsSummary {
  const board = boardCounts(counts.byStatus);
  const recent = items.map(snapshotItem);
  return {
    totalCount: board.total,
    openCount: board.open,
    blockedCount: board.blocked,
    doneCount: board.done,
    kanban: board.kanban,
    assignment: { agent: counts.agent, human: counts.human, unassigned: counts.unassigned },
    needsAssignment: recent.filter(
      (i) => i.assigneeKind === "unassigned" && i.kanbanState !== "done",
    ),
    items: recent,
  };
}
