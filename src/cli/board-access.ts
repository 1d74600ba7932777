import type { ClaimArgs, ClaimResult } from "../board/board.js";
import type { BoardList } from "../board/list.js";
import type { WorkItem, WorkItemInput } from "../contract/ecc/board.js";

/** What the board verbs need of a board, the instance's file or a team
 * board in PostgreSQL (board-pg.ts): the same verbs, rules and output. */
export interface BoardAccess {
  get(id: string): Promise<WorkItem | undefined>;
  upsert(input: WorkItemInput): Promise<WorkItem>;
  list(lane: string | undefined, limit: number | undefined): Promise<BoardList>;
  claim(args: ClaimArgs): Promise<ClaimResult>;
  move(id: string, lane: string): Promise<{ moved: true; item: WorkItem }>;
  close(): Promise<void>;
}
