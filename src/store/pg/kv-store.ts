import type { Client, Pool, PoolClient } from "pg";
import type { KvVersion } from "../kv-order.js";

/** One KV row as held: its version (a null `json` is a tombstone). */
export interface PgKvRow extends KvVersion {
  ns: string;
  key: string;
}

interface Row {
  ns: string;
  key: string;
  value: string | null;
  updated_at: string;
}

const toRow = (r: Row): PgKvRow => ({
  ns: r.ns,
  key: r.key,
  json: r.value,
  updated_at: Number(r.updated_at),
});

/** The channel the kv table's trigger notifies (migration 003). */
export const KV_CHANNEL = "ccmsg_kv";

/** A NOTIFY payload of `ccmsg_kv`: namespace, key and stamp. */
export function parseKvPayload(
  payload: string,
): { ns: string; key: string; updated_at: number } | undefined {
  const [ns, key, stamp] = payload.split("\t");
  if (ns === undefined || key === undefined || stamp === undefined) return undefined;
  return { ns, key, updated_at: Number(stamp) };
}

/**
 * The replaced row wins the comparison of `kvWins` (src/store/kv-order.ts),
 * in SQL: a later stamp; on equal stamps a removal over a value, or the
 * value whose JSON text is greater byte by byte in UTF-8. An identical
 * version replaces nothing.
 */
const WINS = `kv.updated_at < excluded.updated_at
  OR (kv.updated_at = excluded.updated_at AND NOT kv.deleted
      AND (excluded.deleted OR convert_to(excluded.value, 'UTF8') > convert_to(kv.value, 'UTF8')))`;

/** The KV queries over one connection (the pool, or one in a transaction). */
export class PgKvTable {
  constructor(private readonly c: PoolClient | Pool | Client) {}

  /**
   * Offer a version (`json` null: a removal) in one statement: it lands only
   * if it wins over the row held, so concurrent writers through any
   * instance end on the same winner, and a tombstone stays as a row.
   * `priorLive`: a live value was held before (as of the statement's start).
   */
  async put(
    ns: string,
    key: string,
    json: string | null,
    updatedAt: number,
  ): Promise<{ won: boolean; priorLive: boolean }> {
    const r = await this.c.query<{ won: boolean; prior_live: boolean | null }>(
      `WITH prior AS (SELECT NOT deleted AS live FROM kv WHERE ns = $1 AND key = $2),
       up AS (
         INSERT INTO kv (ns, key, value, updated_at, deleted) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value,
           updated_at = excluded.updated_at, deleted = excluded.deleted
         WHERE ${WINS}
         RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM up) AS won, (SELECT live FROM prior) AS prior_live`,
      [ns, key, json, updatedAt, json === null],
    );
    const row = r.rows[0]!;
    return { won: row.won, priorLive: row.prior_live === true };
  }

  /** The held versions (tombstones too) of some keys. */
  async get(keys: { ns: string; key: string }[]): Promise<PgKvRow[]> {
    if (keys.length === 0) return [];
    const r = await this.c.query<Row>(
      `SELECT ns, key, value, updated_at FROM kv
       WHERE (ns, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [keys.map((k) => k.ns), keys.map((k) => k.key)],
    );
    return r.rows.map(toRow);
  }

  /** The live rows of a namespace, by key (no tombstones). */
  async live(ns: string): Promise<PgKvRow[]> {
    const r = await this.c.query<Row>(
      "SELECT ns, key, value, updated_at FROM kv WHERE ns = $1 AND NOT deleted ORDER BY convert_to(key, 'UTF8')",
      [ns],
    );
    return r.rows.map(toRow);
  }

  /** Every row, tombstones included (a catch-up, a copy). */
  async all(): Promise<PgKvRow[]> {
    const r = await this.c.query<Row>("SELECT ns, key, value, updated_at FROM kv ORDER BY ns, key");
    return r.rows.map(toRow);
  }
}
