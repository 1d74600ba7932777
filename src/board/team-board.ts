import type { Logger } from "pino";
import type { WorkItem, WorkItemsSummary } from "../contract/ecc/board.js";
import { PgBoardStore } from "../store/pg/board-store.js";
import { boardSummaryPg } from "./pg-board.js";

/** How many recently updated items the instance keeps at hand for
 * `work_items` snapshots (as the SQLite board's topic sends). */
const RECENT = 200;

/**
 * A board shared by several instances in PostgreSQL (DR-0046). Every
 * committed change — this instance's, another instance's, the CLI's — is
 * announced by the database (LISTEN/NOTIFY); the instance then reads the
 * changed rows once and hands them to its watchers. `version` goes up with
 * every change, so answers computed from the board can be reused until then.
 */
export class TeamBoard {
  private recent_: WorkItem[] = [];
  private readonly listeners = new Set<(items: WorkItem[]) => void>();
  /** Reads of changed rows, one after another: a slower older read must not
   * overwrite a newer one. */
  private chain = Promise.resolve();
  private stopListening: () => Promise<void> = async () => {};
  private summary_: { version: number; limit: number; summary: WorkItemsSummary } | undefined;
  version = 0;

  private constructor(
    readonly store: PgBoardStore,
    private readonly log: Logger,
  ) {}

  static async open(url: string, log: Logger): Promise<TeamBoard> {
    const store = await PgBoardStore.open(url);
    const board = new TeamBoard(store, log);
    try {
      board.stopListening = await store.listen((ids) => board.heard(ids));
      board.recent_ = await store.items().recent(RECENT);
    } catch (error) {
      await store.close();
      throw error;
    }
    log.info({ store: store.location }, "team board on PostgreSQL");
    return board;
  }

  /** The newest items (a `work_items` snapshot). */
  recent(): WorkItem[] {
    return this.recent_;
  }

  /** Call `fn` with the items of every change, whoever made it. */
  onChange(fn: (items: WorkItem[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The board summary, recomputed only after the board changed. */
  async summary(limit: number): Promise<WorkItemsSummary> {
    const version = this.version;
    const hit = this.summary_;
    if (hit !== undefined && hit.version === version && hit.limit === limit) return hit.summary;
    const summary = await boardSummaryPg(this.store, limit);
    this.summary_ = { version, limit, summary };
    return summary;
  }

  private heard(ids: string[]): void {
    this.version++;
    this.chain = this.chain.then(async () => {
      let items: WorkItem[];
      try {
        items = await this.store.items().byIds(ids);
      } catch (error) {
        this.log.warn({ err: error, ids: ids.length }, "team board: changed items not read");
        return;
      }
      const byId = new Map(this.recent_.map((i) => [i.id, i]));
      for (const i of items) byId.set(i.id, i);
      this.recent_ = [...byId.values()]
        .sort((a, b) => cmp(b.updatedAt, a.updatedAt) || cmp(b.id, a.id))
        .slice(0, RECENT);
      this.version++;
      for (const fn of this.listeners) fn(items);
    });
  }

  async close(): Promise<void> {
    await this.stopListening();
    await this.chain;
    await this.store.close();
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
