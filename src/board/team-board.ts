import type { WorkItem, WorkItemsSummary } from "../contract/ecc/board.js";
import { PgBoardStore } from "../store/pg/board-store.js";
import { KV_CHANNEL } from "../store/pg/kv-store.js";
import { TeamKv } from "../store/pg/team-kv.js";
import type { Logger } from "../util/logger.js";
import { boardSummaryPg } from "./pg-board.js";
import { teamStoreLocation } from "./team-store.js";

/** The team board an instance serves, if any (team-store.ts says where). */
export async function openTeamBoard(
  url: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<TeamBoard | undefined> {
  const location = teamStoreLocation(url, env);
  return location === undefined ? undefined : TeamBoard.open(location);
}

export { configuredStore } from "./team-store.js";

/** Other tables' channels the board's LISTEN connection also hears, for
 * whoever follows them (`follow`): one connection per instance, one
 * reconnect and catch-up for all. */
const FOLLOWED = [KV_CHANNEL];

/** A follower of a channel: its payloads, and a catch-up after the LISTEN
 * connection was lost (what changed meanwhile was not announced to us). */
export interface ChannelFollower {
  heard(payloads: string[]): void;
  catchUp(): Promise<void>;
}

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

  private log: Logger | undefined;
  private readonly followers = new Map<string, ChannelFollower>();
  /** KV in the same store, heard on the same connection (the instance's KV
   * engine uses it instead of its file). */
  kv!: TeamKv;

  private constructor(readonly store: PgBoardStore) {}

  static async open(url: string): Promise<TeamBoard> {
    const store = await PgBoardStore.open(url);
    const board = new TeamBoard(store);
    try {
      await board.listen();
      board.recent_ = await store.items().recent(RECENT);
      board.kv = await TeamKv.open(
        store,
        (channel, follower) => board.follow(channel, follower),
        (error, what) => board.log?.warn({ err: error }, what),
      );
    } catch (error) {
      // The LISTEN connection goes back first: the pool ends only once every
      // connection it lent is back.
      await board.stopListening().catch(() => {});
      await store.close();
      throw error;
    }
    return board;
  }

  /** Where the board reports (the instance's log, once it has one). */
  logTo(log: Logger): void {
    this.log = log;
    log.info({ store: this.store.location }, "team board on PostgreSQL");
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

  /** Hear a followed channel (FOLLOWED) on the board's LISTEN connection;
   * payloads arriving before this are not kept, so a follower reads its
   * table after following it. */
  follow(channel: string, follower: ChannelFollower): () => void {
    if (!FOLLOWED.includes(channel)) throw new Error(`channel ${channel} is not listened to`);
    this.followers.set(channel, follower);
    return () => this.followers.delete(channel);
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

  private closed = false;

  /** LISTEN; when the connection is lost, listen again (1 s, doubling to
   * 30 s) and catch up with what changed meanwhile among the newest items. */
  private async listen(): Promise<void> {
    this.stopListening = await this.store.listen(
      (ids) => this.heard(ids),
      (error) => {
        this.log?.warn({ err: error }, "team board: lost the LISTEN connection; reconnecting");
        void this.relisten(1000);
      },
      Object.fromEntries(
        FOLLOWED.map((c) => [c, (p: string[]) => this.followers.get(c)?.heard(p)] as const),
      ),
    );
  }

  private async relisten(wait: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, wait).unref());
    if (this.closed) return;
    try {
      await this.listen();
      const fresh = await this.store.items().recent(RECENT);
      const known = new Map(this.recent_.map((i) => [i.id, i.updatedAt]));
      this.heard(fresh.filter((i) => known.get(i.id) !== i.updatedAt).map((i) => i.id));
      for (const f of this.followers.values())
        await f
          .catchUp()
          .catch((error: unknown) => this.log?.warn({ err: error }, "team store: catch-up failed"));
      this.log?.info("team board: listening again");
    } catch {
      void this.relisten(Math.min(wait * 2, 30_000));
    }
  }

  private heard(ids: string[]): void {
    if (ids.length === 0) return;
    this.version++;
    this.chain = this.chain.then(async () => {
      let items: WorkItem[];
      try {
        items = await this.store.items().byIds(ids);
      } catch (error) {
        this.log?.warn({ err: error, ids: ids.length }, "team board: changed items not read");
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
    this.closed = true;
    this.kv?.dispose();
    await this.stopListening();
    await this.chain;
    await this.store.close();
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
