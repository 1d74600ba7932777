import type { KvEntry } from "../contract/kv.js";
import type { Db } from "./database.js";

interface Row {
  key: string;
  value: string | null;
  updated_at: number;
  deleted: number;
}

/** The KV table. Last writer wins on `updated_at`; a removal is a tombstone
 * that competes like any write. */
export class KvStore {
  private readonly get_;
  private readonly put_;
  private readonly list_;

  constructor(db: Db) {
    this.get_ = db.prepare(
      "SELECT key, value, updated_at, deleted FROM kv WHERE ns = ? AND key = ?",
    );
    this.put_ = db.prepare(
      `INSERT INTO kv (ns, key, value, updated_at, deleted) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(ns, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, deleted = excluded.deleted`,
    );
    this.list_ = db.prepare(
      "SELECT key, value, updated_at, deleted FROM kv WHERE ns = ? AND deleted = 0 ORDER BY key",
    );
  }

  /** The live entry, or undefined when missing or removed. */
  read(ns: string, key: string): { value: unknown; updated_at: number } | undefined {
    const row = this.get_.get(ns, key) as Row | undefined;
    if (row === undefined || row.deleted) return undefined;
    return { value: JSON.parse(row.value!), updated_at: row.updated_at };
  }

  /**
   * Write unless a newer write (or tombstone) is already held. Returns the
   * stamp the entry carries afterwards and whether this write won.
   */
  write(
    ns: string,
    key: string,
    value: unknown,
    updatedAt: number,
  ): { updated_at: number; won: boolean } {
    const row = this.get_.get(ns, key) as Row | undefined;
    if (row !== undefined && row.updated_at > updatedAt)
      return { updated_at: row.updated_at, won: false };
    this.put_.run(ns, key, JSON.stringify(value), updatedAt, 0);
    return { updated_at: updatedAt, won: true };
  }

  /** Tombstone a key; returns whether a live entry was removed. */
  delete(ns: string, key: string, updatedAt: number): boolean {
    const row = this.get_.get(ns, key) as Row | undefined;
    if (row !== undefined && row.updated_at > updatedAt) return false;
    this.put_.run(ns, key, null, updatedAt, 1);
    return row !== undefined && !row.deleted;
  }

  /** Every live entry of a namespace (no tombstones: a snapshot never carries
   * removal markers). */
  list(ns: string): KvEntry[] {
    return (this.list_.all(ns) as Row[]).map((r) => ({
      key: r.key,
      value: JSON.parse(r.value!),
      updated_at: r.updated_at,
    }));
  }
}
