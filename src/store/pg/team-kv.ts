import type { KvEntry } from "../../contract/kv.js";
import { type KvVersion, kvWins } from "../kv-order.js";
import type { PgBoardStore } from "./board-store.js";
import { KV_CHANNEL, type PgKvRow, parseKvPayload } from "./kv-store.js";

/** What the board's LISTEN connection hands a follower of a channel. */
export interface KvFollow {
  heard(payloads: string[]): void;
  catchUp(): Promise<void>;
}

/** Wait before re-reading everything after a failed read of changed rows. */
const RETRY_MS = 1000;

/**
 * KV in the team store (DR-0046 update): every instance naming the database
 * shares one table, written with `PgKvTable.put`'s single-statement
 * last-writer-wins upsert (the order of `kvWins`), and keeps a copy of it in
 * memory so reads, lists and `kv:<ns>` snapshots answer at once, as the file's
 * do. The copy learns other instances' changes from NOTIFY (the row is read
 * again, the payload only names it) and re-reads the whole table after its
 * LISTEN connection was lost. A read answers what this instance knows (§11
 * allows no more), which trails another instance's write by one notification.
 */
export class TeamKv {
  private readonly held = new Map<string, Map<string, KvVersion>>();
  private readonly listeners: ((ns: string, entry: KvEntry) => void)[] = [];
  private retry: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    private readonly store: PgBoardStore,
    private readonly warn: (error: unknown, what: string) => void,
  ) {}

  /** Follow the kv channel, then read the table (a change committed in
   * between is both read and heard; the second changes nothing). */
  static async open(
    store: PgBoardStore,
    follow: (channel: string, follower: KvFollow) => void,
    warn: (error: unknown, what: string) => void = () => {},
  ): Promise<TeamKv> {
    const kv = new TeamKv(store, warn);
    follow(KV_CHANNEL, { heard: (p) => kv.heard(p), catchUp: () => kv.catchUp() });
    await kv.catchUp();
    return kv;
  }

  read(ns: string, key: string): { value: unknown; updated_at: number } | undefined {
    const v = this.held.get(ns)?.get(key);
    if (v === undefined || v.json === null) return undefined;
    return { value: JSON.parse(v.json), updated_at: v.updated_at };
  }

  /** The live entries of a namespace, by key in UTF-8 byte order (SQLite's). */
  list(ns: string): KvEntry[] {
    const out: { key: string; json: string; updated_at: number }[] = [];
    for (const [key, v] of this.held.get(ns) ?? [])
      if (v.json !== null) out.push({ key, json: v.json, updated_at: v.updated_at });
    return out
      .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)))
      .map((e) => ({ key: e.key, value: JSON.parse(e.json), updated_at: e.updated_at }));
  }

  /** Committed when it resolves. `won`: this call is the one to announce
   * the version — false when it lost, and when its own notification (or a
   * newer version) reached this copy first and was announced from there. */
  async write(
    ns: string,
    key: string,
    value: unknown,
    updatedAt: number,
  ): Promise<{ updated_at: number; won: boolean }> {
    const json = JSON.stringify(value);
    const r = await this.store.kv((t) => t.put(ns, key, json, updatedAt));
    if (r.won) {
      if (this.apply(ns, key, { json, updated_at: updatedAt }))
        return { updated_at: updatedAt, won: true };
    } else {
      // Lost: the version that won is read (and announced, once).
      const [row] = await this.store.kv((t) => t.get([{ ns, key }]));
      if (row !== undefined) this.learn(row);
    }
    return { updated_at: this.held.get(ns)?.get(key)?.updated_at ?? updatedAt, won: false };
  }

  /** A tombstone that wins stays as a row. True when this call removed a
   * live entry and is the one to announce it (as for `write`). */
  async delete(ns: string, key: string, updatedAt: number): Promise<boolean> {
    const r = await this.store.kv((t) => t.put(ns, key, null, updatedAt));
    if (!r.won) return false;
    const wasLive = (this.held.get(ns)?.get(key)?.json ?? null) !== null;
    return this.apply(ns, key, { json: null, updated_at: updatedAt }) && (r.priorLive || wasLive);
  }

  onRemote(listener: (ns: string, entry: KvEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Every row again (at open, after the LISTEN connection came back). */
  async catchUp(): Promise<void> {
    for (const row of await this.store.kv((t) => t.all())) this.learn(row);
  }

  /** Rows named by notifications, unless a newer version is already held. */
  private heard(payloads: string[]): void {
    const wanted = new Map<string, { ns: string; key: string }>();
    for (const p of payloads) {
      const n = parseKvPayload(p);
      if (n === undefined) continue;
      const held = this.held.get(n.ns)?.get(n.key);
      if (held !== undefined && held.updated_at > n.updated_at) continue;
      wanted.set(`${n.ns}\t${n.key}`, { ns: n.ns, key: n.key });
    }
    if (wanted.size === 0) return;
    this.store
      .kv((t) => t.get([...wanted.values()]))
      .then(
        (rows) => {
          for (const row of rows) this.learn(row);
        },
        (error: unknown) => {
          this.warn(error, "team KV: changed keys not read; reading them all again");
          clearTimeout(this.retry);
          this.retry = setTimeout(() => {
            this.catchUp().catch((e: unknown) => this.warn(e, "team KV: catch-up failed"));
          }, RETRY_MS);
          this.retry.unref();
        },
      );
  }

  /** Hold a row read from the table; tell listeners when it is news here. */
  private learn(row: PgKvRow): void {
    const before = this.held.get(row.ns)?.get(row.key);
    if (!this.apply(row.ns, row.key, row)) return;
    let entry: KvEntry;
    if (row.json !== null)
      entry = { key: row.key, value: JSON.parse(row.json), updated_at: row.updated_at };
    else if (before !== undefined && before.json !== null)
      entry = { key: row.key, updated_at: row.updated_at, deleted: true };
    else return;
    for (const l of this.listeners) l(row.ns, entry);
  }

  /** Keep `v` if it wins over what is held (kvWins); whether it did. */
  private apply(ns: string, key: string, v: KvVersion): boolean {
    const keys = this.held.get(ns) ?? new Map<string, KvVersion>();
    if (!kvWins(v, keys.get(key))) return false;
    keys.set(key, { json: v.json, updated_at: v.updated_at });
    this.held.set(ns, keys);
    return true;
  }

  dispose(): void {
    clearTimeout(this.retry);
  }
}
