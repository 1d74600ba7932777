import type { WorkItem } from "../../contract/ecc/board.js";
import { ContractError } from "../../contract/errors.js";
import { type CheckRun, CheckRunsStore } from "../check-runs.js";
import { hasTable, openStateStoreReadOnly } from "../state-store.js";
import { WorkItemsStore } from "../work-items.js";
import { PgBoardStore } from "./board-store.js";
import { PgKvTable } from "./kv-store.js";

export interface CopyResult {
  from: string;
  to: string;
  workItems: number;
  checkRuns: number;
  /** KV rows, tombstones included. */
  kv: number;
}

interface KvFileRow {
  ns: string;
  key: string;
  value: string | null;
  updated_at: number;
  deleted: number;
}

/** Progress every this many rows (stderr, for a person watching). */
const PROGRESS_EVERY = 500;

/**
 * Copy the board of an instance's SQLite file into PostgreSQL (DR-0046):
 * every work item, check run and KV row (tombstones too), in one PostgreSQL
 * transaction — all of it lands or nothing does. Copying again changes
 * nothing: an item already there is overwritten only by a copy at least as
 * new (a team board that moved on keeps its newer rows), a check run is one
 * check finishing at one instant, and a KV row competes as any write does
 * (kvWins), so an identical one replaces nothing and an older one loses.
 * The file is only read.
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
  let kv: KvFileRow[];
  try {
    ({ items, runs, kv } = file.read(() => ({
      items: hasTable(file.db, "work_items") ? new WorkItemsStore(file.db).all() : [],
      runs: hasTable(file.db, "check_runs") ? new CheckRunsStore(file.db).all() : [],
      // Tombstones too: a removal must not be undone by an older copy elsewhere.
      kv: hasTable(file.db, "kv")
        ? (file.db
            .prepare("SELECT ns, key, value, updated_at, deleted FROM kv ORDER BY ns, key")
            .all() as KvFileRow[])
        : [],
    })));
  } finally {
    file.close();
  }
  const store = await PgBoardStore.open(url);
  try {
    progress(
      `copying ${items.length} work items, ${runs.length} check runs and ${kv.length} KV entries to ${store.location}`,
    );
    await store.write(async (q, client) => {
      for (const [n, item] of items.entries()) {
        await q.put(item, true);
        if ((n + 1) % PROGRESS_EVERY === 0) progress(`${n + 1}/${items.length} work items`);
      }
      for (const run of runs) await q.recordCheckRun(run);
      const table = new PgKvTable(client);
      for (const [n, r] of kv.entries()) {
        await table.put(r.ns, r.key, r.deleted ? null : r.value, r.updated_at);
        if ((n + 1) % PROGRESS_EVERY === 0) progress(`${n + 1}/${kv.length} KV entries`);
      }
    });
    progress(
      `done: ${items.length} work items, ${runs.length} check runs, ${kv.length} KV entries`,
    );
    return {
      ...{ from: dbPath, to: store.location },
      ...{ workItems: items.length, checkRuns: runs.length, kv: kv.length },
    };
  } finally {
    await store.close();
  }
}
