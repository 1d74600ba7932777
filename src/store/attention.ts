import type { AttentionItem } from "../contract/attention.js";
import type { CommitQueue } from "./commit-queue.js";
import type { Db } from "./database.js";

/** Which items a read takes. */
export interface AttentionQuery {
  pending?: boolean;
  sid?: string;
  limit: number;
  before?: number;
}

/**
 * The attention queue's record (DR-0062): every item asked, at most `max`
 * (the next drops the oldest ended ones, in the same transaction), ended ones
 * kept for the retention. Writes go through the commit queue: an item is
 * shown, and a decision written to its hook, only once it is on disk.
 */
export class AttentionStore {
  private readonly insertRow;
  private readonly updateRow;
  private readonly getRow;
  private readonly pendingAll;
  private readonly pendingOf;
  private readonly dropBeyond;
  private readonly selects = new Map<string, ReturnType<Db["prepare"]>>();

  constructor(
    private readonly db: Db,
    private readonly queue: CommitQueue,
    private readonly max: number,
    private readonly retentionMs: number,
  ) {
    this.insertRow = db.prepare("INSERT INTO attention (sid, asked_at, body) VALUES (?, ?, '{}')");
    this.updateRow = db.prepare("UPDATE attention SET ended_at = ?, body = ? WHERE id = ?");
    this.getRow = db.prepare("SELECT body FROM attention WHERE id = ?");
    this.pendingAll = db.prepare("SELECT count(*) AS n FROM attention WHERE ended_at IS NULL");
    this.pendingOf = db.prepare(
      "SELECT count(*) AS n FROM attention WHERE ended_at IS NULL AND sid = ?",
    );
    // Ended items beyond the newest `max` go; a pending one never does.
    this.dropBeyond = db.prepare(
      "DELETE FROM attention WHERE ended_at IS NOT NULL AND id <= (SELECT id FROM attention ORDER BY id DESC LIMIT 1 OFFSET ?)",
    );
  }

  /** Keep a new item; resolves with it (its id given) once committed. */
  add(item: Omit<AttentionItem, "id">): Promise<AttentionItem> {
    return this.queue.run(() => {
      const id = Number(this.insertRow.run(item.sid, item.asked_at).lastInsertRowid);
      const stored = { id, ...item } as AttentionItem;
      this.updateRow.run(stored.ended_at ?? null, JSON.stringify(stored), id);
      this.dropBeyond.run(this.max - 1);
      return stored;
    });
  }

  /** Change an item as it is on disk when the write runs (concurrent
   * changes of one item never undo each other); resolves with it once
   * committed, or undefined when there is no such item. */
  amend(
    id: number,
    change: (item: AttentionItem) => AttentionItem,
  ): Promise<AttentionItem | undefined> {
    return this.queue.run(() => {
      const now = this.get(id);
      if (now === undefined) return undefined;
      const item = change(now);
      this.updateRow.run(item.ended_at ?? null, JSON.stringify(item), id);
      return item;
    });
  }

  get(id: number): AttentionItem | undefined {
    const row = this.getRow.get(id) as { body: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.body) as AttentionItem);
  }

  /** Newest first, and how many are pending (of `sid` when given). */
  read(q: AttentionQuery, now: number): { items: AttentionItem[]; pending: number; more: boolean } {
    const where = ["(ended_at IS NULL OR ended_at > ?)"];
    const params: (string | number)[] = [now - this.retentionMs];
    if (q.pending === true) where.push("ended_at IS NULL");
    if (q.sid !== undefined) {
      where.push("sid = ?");
      params.push(q.sid);
    }
    if (q.before !== undefined) {
      where.push("id < ?");
      params.push(q.before);
    }
    const sql = `SELECT body FROM attention WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`;
    const select = this.selects.get(sql) ?? this.db.prepare(sql);
    this.selects.set(sql, select);
    const rows = select.all([...params, q.limit + 1]) as { body: string }[];
    const pending = (
      (q.sid === undefined ? this.pendingAll.get() : this.pendingOf.get(q.sid)) as { n: number }
    ).n;
    return {
      items: rows.slice(0, q.limit).map((r) => JSON.parse(r.body) as AttentionItem),
      pending,
      more: rows.length > q.limit,
    };
  }

  /** Every pending item, oldest first (at start: their hooks are gone). */
  pending(): AttentionItem[] {
    return (
      this.db.prepare("SELECT body FROM attention WHERE ended_at IS NULL ORDER BY id").all() as {
        body: string;
      }[]
    ).map((r) => JSON.parse(r.body) as AttentionItem);
  }

  /** Compaction at start: forget ended items past the retention. */
  compact(now: number): Promise<number> {
    return this.queue.run(
      () =>
        this.db
          .prepare("DELETE FROM attention WHERE ended_at IS NOT NULL AND ended_at <= ?")
          .run(now - this.retentionMs).changes,
    );
  }
}
