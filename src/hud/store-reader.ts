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
  checkRuns(repoRoot: string): Promise<CheckRun[] | undefined>;
  /** Board signals; undefined without the table. */
  workSignals(): Promise<WorkSignals | undefined>;
  /** The live entries of a KV namespace; undefined without the table. */
  kvEntries(ns: string): Promise<KvEntry[] | undefined>;
  /** The last board sync of a source; undefined when never run. */
  syncRun(source: SyncSource): Promise<SyncRun | undefined>;
  close(): void;
}

/**
 * @param team the config's team store (DR-0046): check runs and KV are read
 * there instead of the file (the rest stays the instance's own).
 */
export async function openStoreReader(
  dbPath: string,
  team?: string,
): Promise<StoreReader | undefined> {
  const file = await openFileReader(dbPath);
  if (team === undefined) return file;
  const { TeamReader } = await import("../store/pg/reader.js");
  const shared = new TeamReader(team);
  const none = async () => undefined;
  return {
    path: dbPath,
    sessions: file?.sessions,
    workSignals: file?.workSignals ?? none,
    syncRun: file?.syncRun ?? none,
    checkRuns: (repoRoot) => shared.checkRuns(repoRoot),
    kvEntries: (ns) => shared.kvEntries(ns),
    close() {
      file?.close();
      shared.close();
    },
  };
}

async function openFileReader(dbPath: string): Promise<StoreReader | undefined> {
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
    checkRuns: async (repoRoot) => runs?.latestPerName(repoRoot),
    async workSignals() {
      if (!hasItems) return undefined;
      const { readWorkSignals } = await import("./work-queues.js");
      return store.read(() => readWorkSignals(db));
    },
    kvEntries: async (ns) => (kv === undefined ? undefined : store.read(() => kv.list(ns))),
    async syncRun(source) {
      if (!hasSyncRuns) return undefined;
      const { SyncRunsStore } = await import("../store/sync-runs.js");
      return new SyncRunsStore(db).get(source);
    },
    close: () => store.close(),
  };
}
