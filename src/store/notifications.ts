import type { StoredNotification } from "../contract/notifications.js";
import type { CommitQueue } from "./commit-queue.js";
import type { Db } from "./database.js";

/** A notification to keep: what the `notify` event carries, and what it
 * answers. */
export interface NewNotification {
  sid: string;
  sid_label: string;
  text: string;
  sent_at: number;
  reply_to?: string;
}

/** Which notifications a read takes. */
export interface NotificationQuery {
  unread?: boolean;
  sid?: string;
  limit: number;
  before?: number;
}

interface Row {
  id: number;
  sid: string;
  sid_label: string;
  text: string;
  sent_at: number;
  reply_to: string | null;
  quote: string | null;
  read_at: number | null;
}

/**
 * The person's inbox (DR-0056): every notification raised, at most `max`
 * (the next drops the oldest, in the same transaction) and none older than
 * the retention (left out of every read, removed by `compact` at start).
 * Writes go through the commit queue, so whoever hears of one hears of it
 * once it is on disk; reads are single indexed statements on a table of at
 * most `max` rows.
 */
export class NotificationsStore {
  private readonly insert;
  private readonly dropBeyond;
  private readonly countAll;
  private readonly markIds;
  private readonly markAll;
  private readonly markAllOf;
  private readonly unreadAll;
  private readonly unreadOf;
  /** Rows in the table, overstated at worst (a batch rolled back): the
   * bound's delete runs whenever it says full, and sets it right. */
  private rows: number;
  /** The reads' statements, by the filters they take (eight at most). */
  private readonly selects = new Map<string, ReturnType<Db["prepare"]>>();

  constructor(
    private readonly db: Db,
    private readonly queue: CommitQueue,
    private readonly max: number,
    private readonly retentionMs: number,
  ) {
    this.insert = db.prepare(
      "INSERT INTO notifications (sid, sid_label, text, sent_at, reply_to, quote) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.dropBeyond = db.prepare(
      "DELETE FROM notifications WHERE id <= (SELECT id FROM notifications ORDER BY id DESC LIMIT 1 OFFSET ?)",
    );
    this.countAll = db.prepare("SELECT count(*) AS n FROM notifications");
    this.markIds = db.prepare(
      "UPDATE notifications SET read_at = ? WHERE id = ? AND read_at IS NULL AND sent_at > ?",
    );
    this.markAll = db.prepare(
      "UPDATE notifications SET read_at = ? WHERE read_at IS NULL AND sent_at > ?",
    );
    this.markAllOf = db.prepare(
      "UPDATE notifications SET read_at = ? WHERE read_at IS NULL AND sid = ? AND sent_at > ?",
    );
    this.unreadAll = db.prepare(
      "SELECT count(*) AS n FROM notifications WHERE read_at IS NULL AND sent_at > ?",
    );
    this.unreadOf = db.prepare(
      "SELECT count(*) AS n FROM notifications WHERE read_at IS NULL AND sid = ? AND sent_at > ?",
    );
    this.rows = (this.countAll.get() as { n: number }).n;
  }

  /**
   * Keep a notification; resolves with it once committed. `quote` runs inside
   * the write (the text of the message it answers, read from the same file).
   */
  add(n: NewNotification, quote?: () => string | undefined): Promise<StoredNotification> {
    return this.queue.run(() => {
      const q = quote?.();
      const id = Number(
        this.insert.run(n.sid, n.sid_label, n.text, n.sent_at, n.reply_to ?? null, q ?? null)
          .lastInsertRowid,
      );
      if (++this.rows > this.max) {
        this.dropBeyond.run(this.max - 1);
        this.rows = (this.countAll.get() as { n: number }).n;
      }
      return stored({ id, ...n, reply_to: n.reply_to ?? null, quote: q ?? null, read_at: null });
    });
  }

  /** Newest first, and how many are unread (about `sid` when given). */
  read(
    q: NotificationQuery,
    now: number,
  ): { notifications: StoredNotification[]; unread: number; more: boolean } {
    const cutoff = now - this.retentionMs;
    const where = ["sent_at > ?"];
    const params: (string | number)[] = [cutoff];
    if (q.unread === true) where.push("read_at IS NULL");
    if (q.sid !== undefined) {
      where.push("sid = ?");
      params.push(q.sid);
    }
    if (q.before !== undefined) {
      where.push("id < ?");
      params.push(q.before);
    }
    // One more than asked: whether older ones follow.
    const sql = `SELECT * FROM notifications WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`;
    const select = this.selects.get(sql) ?? this.db.prepare(sql);
    this.selects.set(sql, select);
    const rows = select.all([...params, q.limit + 1]) as Row[];
    return {
      notifications: rows.slice(0, q.limit).map(stored),
      unread: this.unread(now, q.sid),
      more: rows.length > q.limit,
    };
  }

  /** How many are unread (about `sid` when given). */
  unread(now: number, sid?: string): number {
    const cutoff = now - this.retentionMs;
    const row = sid === undefined ? this.unreadAll.get(cutoff) : this.unreadOf.get(sid, cutoff);
    return (row as { n: number }).n;
  }

  /** Mark read: these `ids`, or every unread one (about `sid` when given).
   * Resolves once committed with how many were unread and are read now. */
  markRead(
    which: { ids: readonly number[] } | { all: true; sid?: string },
    now: number,
  ): Promise<{ marked: number; unread: number }> {
    const cutoff = now - this.retentionMs;
    return this.queue.run(() => {
      let marked = 0;
      if ("ids" in which)
        for (const id of which.ids) marked += this.markIds.run(now, id, cutoff).changes;
      else if (which.sid === undefined) marked = this.markAll.run(now, cutoff).changes;
      else marked = this.markAllOf.run(now, which.sid, cutoff).changes;
      return { marked, unread: this.unread(now) };
    });
  }

  /** Compaction at start: forget what is past the retention. Resolves with
   * the rows removed. */
  compact(now: number): Promise<number> {
    return this.queue.run(() => {
      const removed = this.db
        .prepare("DELETE FROM notifications WHERE sent_at <= ?")
        .run(now - this.retentionMs).changes;
      this.rows -= removed;
      return removed;
    });
  }
}

function stored(r: Row): StoredNotification {
  const n: StoredNotification = {
    id: r.id,
    sid: r.sid,
    sid_label: r.sid_label,
    text: r.text,
    sent_at: r.sent_at,
  };
  if (r.reply_to !== null) n.reply_to = r.reply_to;
  if (r.quote !== null) n.quote = r.quote;
  if (r.read_at !== null) n.read_at = r.read_at;
  return n;
}
