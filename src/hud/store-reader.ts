import { existsSync } from "node:fs";
import type { KvEntry } from "../contract/kv.js";
import type { CheckRun } from "../store/check-runs.js";
import type { StateStore } from "../store/state-store.js";
import type { SyncRun, SyncSource } from "../store/sync-runs.js";
import type { SessionLookup } from "./target.js";
import type { WorkSignals } from "./work-queues.js";

// Read-only access to the state store for the HUD and the session controls.
// SQLite (and the store modules) load only when the file exists, and a read
// never creates it. A table missing from an older file reads as "unknown".

export interface StoreReader {
  path: string;
  sessions: SessionLookup | undefined;
  /** Latest run per check of a repository; undefined without the table. */
  checkRuns(repoRoot: string): CheckRun[] | undefined;
  /** Board signals; undefined without the table. */
  workSignals(): Promise<WorkSignals | undefined>;
  /** The live entries of a KV namespace; undefined without the table. */
  kvEntries(ns: string): KvEntry[] | undefined;
  /** The last board sync of a source; undefined when never run. */
  syncRun(source: SyncSource): Promise<SyncRun | undefined>;
  close(): void;
}

export async function openStoreReader(dbPath: string): Promise<StoreReader | undefined> {
  if (!existsSync(dbPath)) return undefined;
  const { openStateStoreReadOnly, hasTable } = await import("../store/state-store.js");
  const store: StateStore | undefined = openStateStoreReadOnly(dbPath);
  if (store === undefined) return undefined;
  const { EccSessionsStore } = await import("../store/ecc-sessions.js");
  const { CheckRunsStore } = await import("../store/check-runs.js");
  const { KvStore } = await import("../store/kv.js");
  const db = store.db;
  const sessionsStore = hasTable(db, "sessions") ? new EccSessionsStore(db) : undefined;
  const runs = hasTable(db, "check_runs") ? new CheckRunsStore(db) : undefined;
  const hasItems = hasTable(db, "work_items");
  const kv = hasTable(db, "kv") ? new KvStore(db) : undefined;
  const hasSyncRuns = hasTable(db, "sync_runs");
  return {
    path: dbPath,
    sessions:
      sessionsStore === undefined
        ? undefined
        : {
            get: (sid) => sessionsStore.get(sid),
            latest: () => sessionsStore.latest(1)[0],
            recent: (limit) => sessionsStore.latest(limit),
          },
    checkRuns: (repoRoot) => (runs === undefined ? undefined : runs.latestPerName(repoRoot)),
    async workSignals() {
      if (!hasItems) return undefined;
      const { readWorkSignals } = await import("./work-queues.js");
      return store.read(() => readWorkSignals(db));
    },
    kvEntries: (ns) => (kv === undefined ? undefined : store.read(() => kv.list(ns))),
    async syncRun(source) {
      if (!hasSyncRuns) return undefined;
      const { SyncRunsStore } = await import("../store/sync-runs.js");
      return new SyncRunsStore(db).get(source);
    },
    close: () => store.close(),
  };
}
