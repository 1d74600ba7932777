import type { WorkItem } from "../../contract/ecc/board.js";
import { isDoneStatus } from "../../contract/ecc/lanes.js";
import type { StateStore } from "../../store/state-store.js";
import type { SyncCounts, SyncSource } from "../../store/sync-runs.js";
import { SyncRunsStore } from "../../store/sync-runs.js";
import { WorkItemsStore } from "../../store/work-items.js";
import { closeSynced, mergeSynced, type SyncedItem } from "./merge.js";

// Writing one sync's result: every item change and the run's record in ONE
// transaction, so a sync either lands whole or leaves the board as it was.
// The arguments are plain data: the CLI calls this directly, the instance
// hands it to a board mutation worker (structured clone).

/** What a sync read, ready to be written. */
export interface SyncResult {
  source: SyncSource;
  target: string;
  startedAt: string;
  /** Items the source lists: created or merged. */
  items: SyncedItem[];
  /** Items written only when the board has them (merged or closed PRs). */
  known: SyncedItem[];
  /** Items the source confirmed gone, with the status that ends them. */
  closures: { id: string; status: string; reason: string }[];
  /** Items not in the lists that could not be confirmed gone: kept open. */
  retained: { id: string; reason: string }[];
  /** What the HUD shows from this run (queue counts, Linear health…). */
  facts: unknown;
}

export interface SyncApplied {
  counts: SyncCounts;
  /** The items written, for the board's watchers. */
  changed: WorkItem[];
  created: string[];
  closed: string[];
  retainedItems: { id: string; reason: string }[];
}

export function applySync(store: StateStore, r: SyncResult): SyncApplied {
  const items = new WorkItemsStore(store.db);
  const runs = new SyncRunsStore(store.db);
  return store.write(() => {
    const now = new Date().toISOString();
    const counts: SyncCounts = { created: 0, updated: 0, unchanged: 0, closed: 0, retained: 0 };
    const changed: WorkItem[] = [];
    const created: string[] = [];
    const closed: string[] = [];
    const write = (item: WorkItem) => changed.push(items.put(item));
    for (const desired of [...r.items, ...r.known]) {
      const existing = items.get(desired.id);
      if (existing === undefined && r.known.includes(desired)) continue;
      const next = mergeSynced(existing, desired, now);
      if (next === undefined) counts.unchanged++;
      else {
        write(next);
        if (existing === undefined) {
          counts.created++;
          created.push(next.id);
        } else if (isDoneStatus(next.status) && !isDoneStatus(existing.status)) {
          counts.closed++;
          closed.push(next.id);
        } else counts.updated++;
      }
    }
    for (const c of r.closures) {
      const existing = items.get(c.id);
      const next =
        existing === undefined ? undefined : closeSynced(existing, c.status, now, c.reason);
      if (next === undefined) continue;
      write(next);
      counts.closed++;
      closed.push(c.id);
    }
    counts.retained = r.retained.length;
    runs.succeeded({
      source: r.source,
      target: r.target,
      startedAt: r.startedAt,
      finishedAt: now,
      message: summary(counts),
      counts,
      facts: r.facts,
    });
    return { counts, changed, created, closed, retainedItems: r.retained };
  });
}

/** Record a run that failed; the board is not touched. */
export function recordSyncFailure(
  store: StateStore,
  f: { source: SyncSource; target: string | null; startedAt: string; message: string },
): void {
  const runs = new SyncRunsStore(store.db);
  store.write(() => runs.failed({ ...f, finishedAt: new Date().toISOString() }));
}

/** One line for a run's counts. */
export function summary(c: SyncCounts): string {
  return `${c.created} created, ${c.updated} updated, ${c.closed} closed, ${c.unchanged} unchanged, ${c.retained} retained`;
}
