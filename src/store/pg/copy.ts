import type { WorkItem } from "../../contract/ecc/board.js";
import { ContractError } from "../../contract/errors.js";
import { type CheckRun, CheckRunsStore } from "../check-runs.js";
import { hasTable, openStateStoreReadOnly } from "../state-store.js";
import { WorkItemsStore } from "../work-items.js";
import { PgBoardStore } from "./board-store.js";

export interface CopyResult {
  from: string;
  to: string;
  workItems: number;
  checkRuns: number;
}

/** Progress every this many rows (stderr, for a person watching). */
const PROGRESS_EVERY = 500;

/**
 * Copy the board of an instance's SQLite file into PostgreSQL (DR-0046):
 * every work item and check run, in one PostgreSQL transaction — all of it
 * lands or nothing does. Copying again changes nothing: an item already there
 * is overwritten only by a copy at least as new (a team board that moved on
 * keeps its newer rows), and a check run is one check finishing at one
 * instant. The file is only read.
 */
export async function copyBoard(
  dbPath: string,
  url: string,
  progress: (line: string) => void,
): Promise<CopyResult> {
  const file = openStateStoreReadOnly(dbPath);
  if (file === undefined) throw new ContractError("not_found", `no board at ${dbPath}`);
  let items: WorkItem[];
  let runs: CheckRun[];
  try {
    ({ items, runs } = file.read(() => ({
      items: hasTable(file.db, "work_items") ? new WorkItemsStore(file.db).all() : [],
      runs: hasTable(file.db, "check_runs") ? new CheckRunsStore(file.db).all() : [],
    })));
  } finally {
    file.close();
  }
  const store = await PgBoardStore.open(url);
  try {
    progress(
      `copying ${items.length} work items and ${runs.length} check runs to ${store.location}`,
    );
    await store.write(async (q) => {
      for (const [n, item] of items.entries()) {
        await q.put(item, true);
        if ((n + 1) % PROGRESS_EVERY === 0) progress(`${n + 1}/${items.length} work items`);
      }
      for (const run of runs) await q.recordCheckRun(run);
    });
    progress(`done: ${items.length} work items, ${runs.length} check runs`);
    return { from: dbPath, to: store.location, workItems: items.length, checkRuns: runs.length };
  } finally {
    await store.close();
  }
}
