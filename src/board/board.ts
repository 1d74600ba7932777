import { randomBytes } from "node:crypto";
import type { WorkItem, WorkItemInput, WorkItemsSummary } from "../contract/ecc/board.js";
import {
  ASSIGNEE_KINDS,
  type AssigneeKind,
  isDoneStatus,
  LANES,
  type Lane,
  laneStatus,
  priorityRank,
  snapshotItem,
  workItemLane,
} from "../contract/ecc/lanes.js";
import { type ContractError, contractError } from "../contract/errors.js";
import type { StateStore } from "../store/state-store.js";
import { WorkItemsStore } from "../store/work-items.js";

// The work board's rules (ecc-surfaces §4). Every mutation is one store
// transaction — read, check, write — taken with BEGIN IMMEDIATE, so a claim
// is atomic across every process sharing the file.

/** An invalid mutation: the caller's fault, `invalid_args`, answered 400 /
 * exit 1. */
function invalid(msg: string): ContractError {
  return contractError("invalid_args", msg, { status: 400 });
}

/** The named item does not exist: `not_found` for the CLI, yet 400 over HTTP,
 * as ECC's control pane answers it. */
function notFound(id: string): ContractError {
  return contractError("not_found", `work item ${id} not found`, { status: 400 });
}

/** How many recently updated items a claim without an id chooses among. */
const CLAIM_WINDOW = 100;

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

function nowIso(): string {
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
  const owner = args.owner?.trim();
  if (!owner) throw invalid("claim requires an owner");
  if (args.as !== undefined && !(ASSIGNEE_KINDS as readonly string[]).includes(args.as)) {
    throw invalid("as must be 'agent' or 'human'");
  }
  const items = new WorkItemsStore(store.db);
  return store.write(() => {
    let target: WorkItem | undefined;
    if (args.id !== undefined) {
      target = items.get(args.id);
      if (target === undefined) throw notFound(args.id);
      if (isDoneStatus(target.status)) throw invalid(`work item ${args.id} is ${target.status}`);
      if (target.owner && target.owner !== owner) throw invalid(`already owned by ${target.owner}`);
    } else {
      const open = items.recent(CLAIM_WINDOW).filter((i) => !i.owner && !isDoneStatus(i.status));
      // A stable sort keeps newest-first order among equal priorities.
      target = open.sort((a, b) => priorityRank(a.priority) - priorityRank(b.priority))[0];
      if (target === undefined) return { claimed: false, reason: "no-unassigned-open-items" };
    }
    const metadata = asObject(target.metadata);
    metadata.claimOwnerSource = "local";
    metadata.assigneeKind =
      (args.as as AssigneeKind | undefined) ??
      (metadata.assigneeKind as string | undefined) ??
      "human";
    const item = items.put({
      ...target,
      owner,
      sessionId: args.sessionId ?? target.sessionId,
      status: args.status ?? "running",
      metadata,
      updatedAt: nowIso(),
    });
    return { claimed: true, item };
  });
}

/** Move an item to a lane: `ready` writes status `open`, the others their
 * own name. */
export function moveWorkItem(
  store: StateStore,
  id: string,
  laneName: unknown,
): { moved: true; item: WorkItem } {
  if (typeof id !== "string" || id === "") throw invalid("move requires an id");
  const lane = typeof laneName === "string" ? laneName.trim().toLowerCase() : "";
  if (!(LANES as readonly string[]).includes(lane)) {
    throw invalid(`invalid lane: ${String(laneName)} (one of ${LANES.join(", ")})`);
  }
  const items = new WorkItemsStore(store.db);
  return store.write(() => {
    const existing = items.get(id);
    if (existing === undefined) throw notFound(id);
    const item = items.put({ ...existing, status: laneStatus(lane as Lane), updatedAt: nowIso() });
    return { moved: true, item };
  });
}

/** Create an item or merge fields into one; only the given fields change. */
export function upsertWorkItem(store: StateStore, input: WorkItemInput): WorkItem {
  const items = new WorkItemsStore(store.db);
  const id = input.id ?? `wi-${randomBytes(4).toString("hex")}`;
  return store.write(() => {
    if (items.get(id) === undefined && !input.title) throw invalid("a new work item needs a title");
    return items.upsert({ ...input, id }, nowIso());
  });
}

/**
 * The board summary: counts over ALL items (never a truncated window, so the
 * lane counters match the board), the `limit` most recently updated items, and
 * the open items that still need an owner.
 */
export function boardSummary(store: StateStore, limit: number): WorkItemsSummary {
  const items = new WorkItemsStore(store.db);
  return store.read(() => {
    const counts = items.counts();
    const kanban = { ready: 0, running: 0, blocked: 0, done: 0 };
    for (const [status, n] of counts.byStatus) kanban[workItemLane(status)] += n;
    const recent = items.recent(limit).map(snapshotItem);
    return {
      totalCount: counts.total,
      openCount: counts.total - kanban.done,
      blockedCount: kanban.blocked,
      doneCount: kanban.done,
      kanban,
      assignment: { agent: counts.agent, human: counts.human, unassigned: counts.unassigned },
      needsAssignment: recent.filter(
        (i) => i.assigneeKind === "unassigned" && i.kanbanState !== "done",
      ),
      items: recent,
    };
  });
}
