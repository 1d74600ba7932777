import type { KvEntry } from "../contract/kv.js";
import type { Db } from "./database.js";
import { kvWins } from "./kv-order.js";

interface Row {
  key: string;
  value: string | null;
  updated_at: number;
  deleted: number;
}

/** One stored version as replication sends it (DR-0049). */
export interface KvChange {
  /** Its place in this replica's change sequence. */
  seq: number;
  ns: string;
  key: string;
  /** The value's JSON text; null for a tombstone. */
  json: string | null;
  updated_at: number;
  /** The replica it was received from; null when written here. */
  origin: string | null;
}

/** How far this store holds a peer's change sequence. */
export interface KvMark {
  /** The life of the peer's store the mark counts in (its `kv_life.replica`). */
  replica: string;
  seq: number;
}

/** The KV table. Last writer wins by `kvWins` (a later stamp, then a removal,
 * then the greater JSON text); a removal is a tombstone that competes like
 * any write. Every version that wins takes the next place in the change
 * sequence, which replication reads (DR-0049). */
export class KvStore {
  private readonly get_;
  private readonly list_;
  // Prepared on first use: they name the replication columns (migration 9),
  // which a reader of an older file (the HUD) never needs.
  private sql_: ReturnType<typeof replicationStatements> | undefined;
  private lastSeq: number | undefined;

  constructor(private readonly db: Db) {
    this.get_ = db.prepare(
      "SELECT key, value, updated_at, deleted FROM kv WHERE ns = ? AND key = ?",
    );
    this.list_ = db.prepare(
      "SELECT key, value, updated_at, deleted FROM kv WHERE ns = ? AND deleted = 0 ORDER BY key",
    );
  }

  private get sql(): ReturnType<typeof replicationStatements> {
    this.sql_ ??= replicationStatements(this.db);
    return this.sql_;
  }

  /** The live entry, or undefined when missing or removed. */
  read(ns: string, key: string): { value: unknown; updated_at: number } | undefined {
    const row = this.get_.get(ns, key) as Row | undefined;
    if (row === undefined || row.deleted) return undefined;
    return { value: JSON.parse(row.value!), updated_at: row.updated_at };
  }

  /**
   * Write unless the version held wins over this one (`kvWins`; an identical
   * version is not written again). Returns the stamp the entry carries
   * afterwards and whether this write won. `storedAt`: the local time.
   */
  write(
    ns: string,
    key: string,
    value: unknown,
    updatedAt: number,
    storedAt = Date.now(),
  ): { updated_at: number; won: boolean } {
    const r = this.apply(ns, key, JSON.stringify(value), updatedAt, null, storedAt);
    return { updated_at: r.won ? updatedAt : r.held!.updated_at, won: r.won };
  }

  /** Tombstone a key; returns whether a live entry was removed. A tombstone
   * is stored even for a key never seen, since it must still beat an older
   * value held elsewhere. */
  delete(ns: string, key: string, updatedAt: number, storedAt = Date.now()): boolean {
    return this.apply(ns, key, null, updatedAt, null, storedAt).removed;
  }

  /**
   * Store a version (`json` null: a tombstone) if it wins over the one held,
   * in the next place of the change sequence. `origin`: the replica it came
   * from (null: written here). `removed`: a live value gave way to a tombstone.
   */
  apply(
    ns: string,
    key: string,
    json: string | null,
    updatedAt: number,
    origin: string | null,
    storedAt: number,
  ): { won: boolean; removed: boolean; held: { updated_at: number } | undefined } {
    const row = this.get_.get(ns, key) as Row | undefined;
    const held =
      row === undefined
        ? undefined
        : { updated_at: row.updated_at, json: row.deleted ? null : row.value };
    if (!kvWins({ updated_at: updatedAt, json }, held)) return { won: false, removed: false, held };
    const deleted = json === null ? 1 : 0;
    this.sql.put.run(ns, key, json, updatedAt, deleted, this.nextSeq(), storedAt, origin);
    return { won: true, removed: deleted === 1 && held?.json != null, held };
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

  /** The versions held past `seq` in the change sequence, in order: at most
   * `limit` of them, and no more once their JSON texts reach `maxChars`
   * (rows are read one at a time, so large values past that stay unread). */
  changesSince(seq: number, limit: number, maxChars = Number.POSITIVE_INFINITY): KvChange[] {
    const out: KvChange[] = [];
    let chars = 0;
    for (const row of this.sql.since.iterate(seq, limit) as IterableIterator<KvChange>) {
      out.push(row);
      chars += row.json?.length ?? 0;
      if (chars >= maxChars) break;
    }
    return out;
  }

  /** The last place taken in the change sequence. */
  seq(): number {
    this.lastSeq ??= (this.sql.lastSeq.get() as { seq: number }).seq;
    return this.lastSeq;
  }

  /** This life of the store, named in what it sends to peers. */
  replica(): string {
    return (this.sql.replica.get() as { replica: string }).replica;
  }

  /** Begin a new life of the store (its sequence is not the one peers hold
   * marks in). */
  setReplica(replica: string): void {
    this.sql.setReplica.run(replica);
  }

  mark(peer: string): KvMark | undefined {
    return this.sql.mark.get(peer) as KvMark | undefined;
  }

  /** Record that everything of `peer`'s sequence up to `seq` is held; a mark
   * never goes back within one life of the peer's store. */
  setMark(peer: string, mark: KvMark): void {
    this.sql.setMark.run(peer, mark.replica, mark.seq);
  }

  /** Remove up to `limit` tombstones stored before `before`; returns how many.
   * The sequence never reuses a place a purged row held. */
  purgeTombstones(before: number, limit: number): number {
    const removed = this.sql.purge.run(before, limit).changes;
    if (removed > 0) this.sql.floor.run(this.seq());
    return removed;
  }

  private nextSeq(): number {
    this.lastSeq = this.seq() + 1;
    return this.lastSeq;
  }
}

function replicationStatements(db: Db) {
  return {
    put: db.prepare(
      `INSERT INTO kv (ns, key, value, updated_at, deleted, seq, stored_at, origin)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(ns, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
         deleted = excluded.deleted, seq = excluded.seq, stored_at = excluded.stored_at,
         origin = excluded.origin`,
    ),
    since: db.prepare(
      `SELECT seq, ns, key, value AS json, updated_at, origin FROM kv
       WHERE seq > ? ORDER BY seq LIMIT ?`,
    ),
    lastSeq: db.prepare(
      `SELECT max(coalesce((SELECT max(seq) FROM kv), 0),
         coalesce((SELECT seq_floor FROM kv_life), 0)) AS seq`,
    ),
    floor: db.prepare("UPDATE kv_life SET seq_floor = ?"),
    replica: db.prepare("SELECT replica FROM kv_life"),
    setReplica: db.prepare("UPDATE kv_life SET replica = ?"),
    mark: db.prepare("SELECT replica, seq FROM kv_marks WHERE peer = ?"),
    setMark: db.prepare(
      `INSERT INTO kv_marks (peer, replica, seq) VALUES (?, ?, ?)
       ON CONFLICT(peer) DO UPDATE SET
         seq = CASE WHEN replica = excluded.replica THEN max(seq, excluded.seq) ELSE excluded.seq END,
         replica = excluded.replica`,
    ),
    purge: db.prepare(
      `DELETE FROM kv WHERE rowid IN
         (SELECT rowid FROM kv WHERE deleted = 1 AND stored_at < ? LIMIT ?)`,
    ),
  };
}
