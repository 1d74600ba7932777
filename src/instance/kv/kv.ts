import { contractError } from "../../contract/errors.js";
import type { KvEntry, KvReadResult } from "../../contract/kv.js";
import type { KvStore } from "../../store/kv.js";
import type { Clock } from "../../util/clock.js";
import type { TopicHub } from "../topic-hub.js";

/**
 * Where the engine keeps entries: the instance's own file (`fileKv`) or the
 * team store in PostgreSQL (`TeamKv`, DR-0046). Reads answer at once from
 * what this instance knows; a write resolves once committed, saying the
 * stamp the entry carries and whether it won; a removal resolves to whether
 * it removed a live entry. `won` / removed mean "announce it": a backend that
 * already announced the change through `onRemote` says false.
 */
export interface KvBackend {
  read(ns: string, key: string): KvReadResult | undefined;
  list(ns: string): KvEntry[];
  write(
    ns: string,
    key: string,
    value: unknown,
    updatedAt: number,
    /** When this instance stores it (tombstone age, DR-0049); default now. */
    storedAt?: number,
  ): Promise<{ updated_at: number; won: boolean }>;
  delete(ns: string, key: string, updatedAt: number, storedAt?: number): Promise<boolean>;
  /** Changes that won elsewhere (another instance sharing the store). */
  onRemote?(listener: (ns: string, entry: KvEntry) => void): void;
}

/** The instance's own KV table, written in its group commit (never in
 * SQLite's busy wait), each write resolving once it is on disk. */
export function fileKv(store: KvStore, commit: <T>(write: () => T) => Promise<T>): KvBackend {
  return {
    read: (ns, key) => store.read(ns, key),
    list: (ns) => store.list(ns),
    write: (ns, key, value, at, storedAt) =>
      commit(() => store.write(ns, key, value, at, storedAt)),
    delete: (ns, key, at, storedAt) => commit(() => store.delete(ns, key, at, storedAt)),
  };
}

/**
 * The key-value engine (contract §4.3.6, §11): last writer wins on
 * `updated_at`, a removal is a tombstone, and every change that wins reaches
 * `kv:<ns>` subscribers. It serves that topic's snapshot.
 */
export class Kv {
  private readonly listeners: ((ns: string, entry: KvEntry) => void)[] = [];
  private readonly storedListeners: (() => void)[] = [];

  constructor(
    private readonly store: KvBackend,
    private readonly hub: TopicHub,
    private readonly clock: Clock,
  ) {
    hub.provideSnapshot("kv", (_conn, ns) => ({ entries: ns === undefined ? [] : store.list(ns) }));
    store.onRemote?.((ns, entry) => this.changed(ns, entry));
  }

  read(ns: string, key: string): KvReadResult {
    const entry = this.store.read(ns, key);
    if (entry === undefined) throw contractError("not_found", `no key ${key} in ${ns}`);
    return entry;
  }

  /** Write at `updatedAt` (default now); returns the stamp the entry carries. */
  async write(ns: string, key: string, value: unknown, updatedAt?: number): Promise<number> {
    const now = this.clock.now();
    const stamp = updatedAt ?? now;
    const result = await this.store.write(ns, key, value, stamp, now);
    if (result.won) this.changed(ns, { key, value, updated_at: stamp });
    this.stored();
    return result.updated_at;
  }

  /** Remove a key (idempotent), at `updatedAt` (default now): an engine
   * removing one version states a stamp just after it, so a newer write
   * made elsewhere still wins. */
  async delete(ns: string, key: string, updatedAt?: number): Promise<void> {
    const now = this.clock.now();
    const stamp = updatedAt ?? now;
    if (await this.store.delete(ns, key, stamp, now)) {
      this.changed(ns, { key, updated_at: stamp, deleted: true });
    }
    // A tombstone over nothing live is news to no subscriber, but it is
    // stored and replicated.
    this.stored();
  }

  /** The live entries of a namespace. */
  list(ns: string): KvEntry[] {
    return this.store.list(ns);
  }

  /** Hear every change that wins (after subscribers were sent it). */
  onChange(listener: (ns: string, entry: KvEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Hear that versions may have joined the store's change sequence
   * (replication sends them on; DR-0049). */
  onStored(listener: () => void): void {
    this.storedListeners.push(listener);
  }

  /** Changes that won here after arriving from a peer (DR-0049): subscribers
   * and listeners hear them exactly as a local change, several in one frame. */
  announce(ns: string, entries: KvEntry[]): void {
    this.hub.publish(`kv:${ns}`, { entries });
    for (const entry of entries) for (const l of this.listeners) l(ns, entry);
  }

  private changed(ns: string, entry: KvEntry): void {
    this.hub.publish(`kv:${ns}`, { entries: [entry] });
    for (const l of this.listeners) l(ns, entry);
  }

  private stored(): void {
    for (const l of this.storedListeners) l();
  }
}
