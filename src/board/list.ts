import type { WorkItem, WorkItemsSummary } from "../contract/ecc/board.js";
import { countsSentence, LANES, workItemLane } from "../contract/ecc/lanes.js";
import { ContractError } from "../contract/errors.js";
import type { StateStore } from "../store/state-store.js";
import { boardSummary } from "./board.js";

// The board as `ccmsg board list` and the MCP server's board_list show it.

/** What `board list` shows: the counts over every item and the `limit`
 * (default 20) most recently updated items, of one lane when given. */
export function listBoard(store: StateStore, lane?: string, limit = 20) {
  return listOf(boardSummary(store, listWindow(lane, limit)), lane, limit);
}

/** How many recent items a list reads, after checking its arguments. */
export function listWindow(lane: string | undefined, limit: number): number {
  if (!Number.isInteger(limit) || limit < 1)
    throw new ContractError("invalid_args", "limit must be a positive integer");
  if (lane !== undefined && !(LANES as readonly string[]).includes(lane)) {
    throw new ContractError("invalid_args", `lane must be one of ${LANES.join(", ")}`);
  }
  return lane === undefined ? limit : 100;
}

/** The list from a board summary read with `listWindow`'s window. */
export function listOf(summary: WorkItemsSummary, lane: string | undefined, limit: number) {
  const items = summary.items
    .filter((i) => lane === undefined || i.kanbanState === lane)
    .slice(0, limit);
  const { needsAssignment: _n, items: _i, ...counts } = summary;
  return { ...counts, items };
}

export type BoardList = ReturnType<typeof listOf>;

export function boardListText(list: BoardList): string {
  return [
    countsSentence({
      total: list.totalCount,
      open: list.openCount,
      blocked: list.blockedCount,
      done: list.doneCount,
    }),
    `lanes: ${LANES.map((l) => `${l} ${list.kanban[l]}`).join(", ")}`,
    ...list.items.map((i) => workItemLine(i)),
  ].join("\n");
}

/** One item on one line: id, lane/status, title, priority, owner. */
export function workItemLine(i: WorkItem): string {
  return `${i.id}  [${workItemLane(i.status)}/${i.status}] ${i.title}${i.priority ? ` (${i.priority})` : ""}${i.owner ? ` — ${i.owner}` : ""}`;
}
