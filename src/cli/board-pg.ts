import { listOf, listWindow } from "../board/list.js";
import {
  boardSummaryPg,
  claimWorkItemPg,
  moveWorkItemPg,
  upsertWorkItemPg,
} from "../board/pg-board.js";
import { PgBoardStore } from "../store/pg/board-store.js";
import type { BoardAccess } from "./board-access.js";

/**
 * `ccmsg board …` on a team board in PostgreSQL (DR-0046): the verbs of
 * board.ts over the same rules, each mutation one transaction; the running
 * instances hear every change through the database. Loaded only when a
 * `postgres://` store is named, so the file board never loads `pg`.
 */
export async function teamBoard(url: string): Promise<BoardAccess> {
  const store = await PgBoardStore.open(url);
  return {
    get: (id) => store.items().get(id),
    upsert: (input) => upsertWorkItemPg(store, input),
    list: async (lane, limit = 20) =>
      listOf(await boardSummaryPg(store, listWindow(lane, limit)), lane, limit),
    claim: (args) => claimWorkItemPg(store, args),
    move: (id, lane) => moveWorkItemPg(store, id, lane),
    close: () => store.close(),
  };
}
