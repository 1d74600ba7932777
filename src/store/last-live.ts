import type { LastLiveSession } from "../contract/peers.js";
import type { Db } from "./database.js";

/** Sessions the instance lost, kept until they greet again, are removed, or
 * pass their retention (measured from `last_seen_at`). */
export class LastLiveStore {
  private readonly upsert;
  private readonly remove_;
  private readonly selectAll;
  private readonly prune_;

  constructor(db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO last_live (sid, row, last_seen_at) VALUES (?, ?, ?)
       ON CONFLICT(sid) DO UPDATE SET row = excluded.row, last_seen_at = excluded.last_seen_at`,
    );
    this.remove_ = db.prepare("DELETE FROM last_live WHERE sid = ?");
    this.selectAll = db.prepare("SELECT row FROM last_live ORDER BY last_seen_at DESC");
    this.prune_ = db.prepare("DELETE FROM last_live WHERE last_seen_at <= ?");
  }

  put(row: LastLiveSession): void {
    this.upsert.run(row.sid, JSON.stringify(row), row.last_seen_at);
  }

  /** Whether a row existed. */
  remove(sid: string): boolean {
    return this.remove_.run(sid).changes > 0;
  }

  all(): LastLiveSession[] {
    return (this.selectAll.all() as { row: string }[]).map(
      (r) => JSON.parse(r.row) as LastLiveSession,
    );
  }

  /** Delete rows whose retention has passed. */
  prune(now: number, retentionMs: number): number {
    return this.prune_.run(now - retentionMs).changes;
  }
}
