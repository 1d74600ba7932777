import { MAX_FRAME_BYTES } from "../contract/constants.js";
import { contractError } from "../contract/errors.js";
import type { KvEntry, KvReadResult } from "../contract/kv.js";
import type { KvStore } from "../store/kv.js";
import type { Clock } from "./clock.js";
import type { TopicHub } from "./topic-hub.js";

/** A version received from a peer (DR-0049): `json` null is a tombstone. */
export interface KvVersionIn {
  ns: string;
  key: string;
  json: string | null;
  updated_at: number;
}

/** What one `kv:<ns>` frame of merged entries may weigh, so that a large
 * catch-up reaches subscribers in frames that fit MAX_FRAME_BYTES (the
 * envelope and the per-entry field names take the rest). */
const MERGE_FRAME_BUDGET = MAX_FRAME_BYTES / 2;

/**
 * The key-value engine (contract §4.3.6, §11): last writer wins by `kvWins`,
 * a removal is a tombstone, and every change that wins reaches `kv:<ns>`
 * subscribers, whether written here or received from a peer. It serves that
 * topic's snapshot.
 */
export class Kv {
  private readonly listeners: ((ns: string, entry: KvEntry) => void)[] = [];
  private readonly storedListeners: (() => void)[] = [];

  /** @param commit runs a write in the instance's group commit (never in
   * SQLite's busy wait), resolving once it is on disk. */
  constructor(
    private readonly store: KvStore,
    private readonly commit: <T>(write: () => T) => Promise<T>,
    private readonly hub: TopicHub,
    private readonly clock: Clock,
  ) {
    hub.provideSnapshot("kv", (_conn, ns) => ({ entries: ns === undefined ? [] : store.list(ns) }));
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
    const result = await this.commit(() => this.store.write(ns, key, value, stamp, now));
    if (result.won) this.changed(ns, [{ key, value, updated_at: stamp }]);
    this.stored();
    return result.updated_at;
  }

  /** Remove a key (idempotent), at `updatedAt` (default now): an engine
   * removing one version states a stamp just after it, so a newer write
   * made elsewhere still wins. */
  async delete(ns: string, key: string, updatedAt?: number): Promise<void> {
    const now = this.clock.now();
    const stamp = updatedAt ?? now;
    if (await this.commit(() => this.store.delete(ns, key, stamp, now))) {
      this.changed(ns, [{ key, updated_at: stamp, deleted: true }]);
    }
    this.stored();
  }

  /**
   * Store versions received from replica `origin` by the same rule as a local
   * write, in one commit with `alongside` (the peer's mark); subscribers hear
   * the ones that win exactly as they hear a local change. Resolves with how
   * many won (tombstones over nothing live included), once on disk.
   */
  async merge(
    versions: readonly KvVersionIn[],
    origin: string,
    alongside: () => void,
  ): Promise<number> {
    const now = this.clock.now();
    let stored = 0;
    const won = await this.commit(() => {
      const out: { ns: string; entry: KvEntry; weight: number }[] = [];
      for (const v of versions) {
        const r = this.store.apply(v.ns, v.key, v.json, v.updated_at, origin, now);
        if (r.won) stored++;
        if (v.json !== null && r.won) {
          const entry = { key: v.key, value: JSON.parse(v.json), updated_at: v.updated_at };
          out.push({ ns: v.ns, entry, weight: Buffer.byteLength(v.json) + 4 * v.key.length + 40 });
        } else if (r.removed) {
          const entry = { key: v.key, updated_at: v.updated_at, deleted: true as const };
          out.push({ ns: v.ns, entry, weight: 4 * v.key.length + 60 });
        }
      }
      alongside();
      return out;
    });
    // One frame per namespace and budget, not one per key.
    const byNs = new Map<string, { entries: KvEntry[]; weight: number }[]>();
    for (const w of won) {
      const frames = byNs.get(w.ns) ?? [];
      byNs.set(w.ns, frames);
      const last = frames.at(-1);
      if (last !== undefined && last.weight + w.weight <= MERGE_FRAME_BUDGET) {
        last.entries.push(w.entry);
        last.weight += w.weight;
      } else frames.push({ entries: [w.entry], weight: w.weight });
    }
    for (const [ns, frames] of byNs) for (const f of frames) this.changed(ns, f.entries);
    // A tombstone over nothing live is news to no subscriber, but it is
    // stored and travels on.
    if (stored > 0) this.stored();
    return stored;
  }

  /** The live entries of a namespace. */
  list(ns: string): KvEntry[] {
    return this.store.list(ns);
  }

  /** Hear every change that wins (after subscribers were sent it). */
  onChange(listener: (ns: string, entry: KvEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Hear that new versions may have joined the change sequence (replication
   * sends them on). */
  onStored(listener: () => void): void {
    this.storedListeners.push(listener);
  }

  private changed(ns: string, entries: KvEntry[]): void {
    this.hub.publish(`kv:${ns}`, { entries });
    for (const entry of entries) for (const l of this.listeners) l(ns, entry);
  }

  private stored(): void {
    for (const l of this.storedListeners) l();
  }
}
