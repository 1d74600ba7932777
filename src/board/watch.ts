import type { WorkItem } from "../contract/ecc/board.js";
import type { Db } from "../store/database.js";
import { WorkItemsStore } from "../store/work-items.js";

/** How often, while someone watches the board, the instance asks SQLite
 * whether another connection committed (a cheap pragma, no table read). */
const POLL_MS = 250;

/**
 * Notices work items written by other processes — the CLI, ECC's tools, the
 * mutation workers — and hands them to `publish`, so `work_items` watchers see
 * every change however it was made. `PRAGMA data_version` changes exactly when
 * another connection committed; only then are the changed rows read.
 */
export class WorkItemsWatch {
  private timer: NodeJS.Timeout | undefined;
  private version = 0;
  private cursor = "";
  private readonly published = new Map<string, string>();
  private readonly items: WorkItemsStore;

  constructor(
    private readonly db: Db,
    private readonly publish: (items: WorkItem[]) => void,
  ) {
    this.items = new WorkItemsStore(db);
  }

  /** Start watching (first watcher) or stop (last one left). */
  setWatched(watched: boolean): void {
    if (watched && this.timer === undefined) {
      this.version = this.dataVersion();
      this.cursor = new Date().toISOString();
      this.timer = setInterval(() => this.poll(), POLL_MS);
      this.timer.unref();
    } else if (!watched && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.published.clear();
    }
  }

  /** Publish items unless this exact version was already published. */
  offer(items: WorkItem[]): void {
    const fresh = items.filter((i) => this.published.get(i.id) !== i.updatedAt);
    for (const i of fresh) {
      this.published.set(i.id, i.updatedAt);
      if (i.updatedAt > this.cursor) this.cursor = i.updatedAt;
    }
    if (fresh.length > 0) this.publish(fresh);
  }

  private poll(): void {
    let version: number;
    try {
      version = this.dataVersion();
    } catch {
      return;
    }
    if (version === this.version) return;
    this.version = version;
    // `>=` with de-duplication: two writes in one millisecond share a stamp.
    this.offer(this.items.changedSince(this.cursor.slice(0, -1)));
  }

  private dataVersion(): number {
    return this.db.pragma("data_version", { simple: true }) as number;
  }

  dispose(): void {
    this.setWatched(false);
  }
}
