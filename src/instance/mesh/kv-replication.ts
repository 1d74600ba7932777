import { KV_TOMBSTONE_RETENTION_MS, MAX_FRAME_BYTES } from "../../contract/constants.js";
import { KvKey, Namespace, Timestamp } from "../../contract/identifiers.js";
import type { KvEntry } from "../../contract/kv.js";
import { isValid } from "../../contract/validate.js";
import type { KvChange, KvStore } from "../../store/kv.js";
import type { Clock } from "../../util/clock.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";
import type { Logger } from "../../util/logger.js";
import type { Kv } from "../kv/kv.js";
import type { MeshFrame, MeshPort } from "./port.js";

// KV replication across the mesh (contract §11, DR-0049). Each replica keeps a
// change sequence: every version that wins in its store, written here or
// received, takes the next place. A peer pulls that sequence from the last
// place it holds (its mark, stored in the same commit as what it received),
// and then keeps receiving it live: one mechanism for catch-up after a
// partition or restart and for the steady stream. Received versions join the
// receiver's own sequence and so travel on to the other peers (a partial
// partition still converges), but never back to the replica they came from;
// a version that does not win is not stored again, so nothing loops.
//
// Frames (`mesh: "kv"`), on one link:
//   hello   { replica }                      each side, when the link comes up
//   pull    { of, by, from, gen }            "send me your sequence past `from`"
//   changes { replica, gen, upto, e }        e: [ns, key, updated_at, value?][]
//   ack     { gen, upto }                    once `changes` is on disk

/** Rows read from the sequence per frame: bounds one commit on the receiver
 * and one turn of the event loop on either side. */
const CHUNK_ROWS = 512;
/** A frame's weight in bytes, leaving room for its own fields. A single
 * entry heavier than this still travels alone (a value is at most
 * KV_VALUE_MAX_BYTES, which leaves 4 KiB for key and envelope). */
const CHUNK_BYTES = MAX_FRAME_BYTES - 8192;
/** Frames sent and not yet acknowledged, per peer: the next chunk is read
 * while the last is being committed. */
const WINDOW = 2;
/** How often tombstones past KV_TOMBSTONE_RETENTION_MS are purged, and how
 * many per commit. */
const PURGE_EVERY_MS = 3_600_000;
const PURGE_ROWS = 1000;

/** What one `kv:<ns>` frame of received changes may weigh, so that a large
 * catch-up reaches subscribers in frames that fit MAX_FRAME_BYTES (the
 * envelope and the per-entry field names take the rest). */
const ANNOUNCE_BYTES = MAX_FRAME_BYTES / 2;

type Entry = [ns: string, key: string, updatedAt: number, value?: unknown];

/** A version received from a peer: `json` null is a tombstone. */
interface VersionIn {
  ns: string;
  key: string;
  json: string | null;
  updated_at: number;
}

interface Outbound {
  /** The peer's store life, whose versions are never sent back to it. */
  peerReplica: string;
  gen: number;
  /** The last place of our sequence sent. */
  cursor: number;
  inFlight: number;
}

interface Inbound {
  /** The peer's store life, from its `hello`. */
  replica: string;
  /** Our pull's number: frames of an older pull are ignored. */
  gen: number;
  /** The peer's frames, committed one after another, so that a failed one
   * never lets a later mark pass it. */
  chain: Promise<void>;
}

export interface KvReplicationDeps {
  port: MeshPort;
  kv: Kv;
  store: KvStore;
  commit: <T>(write: () => T) => Promise<T>;
  clock: Clock;
  log: Logger;
}

export class KvReplication {
  private replica: string;
  /** A new life is being recorded: pulls wait for the hello that follows. */
  private renewing = false;
  private readonly out = new Map<string, Outbound>();
  private readonly in = new Map<string, Inbound>();
  private pulls = 0;
  /** Received frames not yet committed. */
  private applying = 0;
  private pumpQueued = false;
  private purgeTimer: ReturnType<typeof setInterval> | undefined;
  private disposed = false;

  constructor(private readonly d: KvReplicationDeps) {
    this.replica = d.store.replica();
    d.kv.onStored(() => this.schedulePump());
    d.port.onLink((peer, up) => (up ? this.linkUp(peer) : this.linkDown(peer)));
    d.port.onFrame("kv", (from, frame) => this.received(from, frame));
    for (const peer of d.port.linked()) this.linkUp(peer);
    this.purgeTimer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.purgeTimer.unref();
    void this.purge();
  }

  /** Whether every link is caught up with what this replica holds and
   * nothing received is still being committed (for tests). */
  idle(): boolean {
    if (this.applying > 0 || this.pumpQueued) return false;
    const last = this.d.store.seq();
    for (const s of this.out.values()) if (s.inFlight > 0 || s.cursor < last) return false;
    return true;
  }

  /** Purge tombstones stored more than KV_TOMBSTONE_RETENTION_MS ago, a
   * bounded commit at a time; resolves with how many. */
  async purge(): Promise<number> {
    const before = this.d.clock.now() - KV_TOMBSTONE_RETENTION_MS;
    let total = 0;
    try {
      for (;;) {
        if (this.disposed) break;
        const n = await this.d.commit(() => this.d.store.purgeTombstones(before, PURGE_ROWS));
        total += n;
        if (n < PURGE_ROWS) break;
      }
    } catch (error) {
      this.d.log.warn({ err: error }, "kv tombstone purge stopped; retried next hour");
    }
    if (total > 0) this.d.log.info({ removed: total }, "kv tombstones purged");
    return total;
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.purgeTimer);
    this.out.clear();
    this.in.clear();
  }

  // A link coming up never clears what the peer's first frames may already
  // have set up: the port reports it after the link is usable. It may come up
  // again without going down (a replaced link, whose frames and acks in
  // flight are gone): both streams start again from the marks.
  private linkUp(peer: string): void {
    this.d.port.send(peer, { mesh: "kv", t: "hello", replica: this.replica });
    const s = this.in.get(peer);
    if (s !== undefined) this.hello(peer, s.replica);
  }

  /**
   * A peer holds a mark past the end of our sequence: this file is older than
   * what we once told it (restored from a copy), so neither its marks in our
   * sequence nor its belief that versions it got from us are still here hold.
   * Start a new life: every peer pulls all of it again, and is pulled again
   * (from our own marks, restored with the file) without holding back what
   * it got from our former life.
   */
  private async renew(): Promise<void> {
    this.renewing = true;
    const life = nodeCrypto().randomBytes(16).toString("hex");
    try {
      await this.d.commit(() => this.d.store.setReplica(life));
    } catch (error) {
      this.d.log.warn({ err: error }, "kv replication: new store life not recorded");
      this.renewing = false;
      return;
    }
    this.d.log.warn({ replica: life }, "kv replication: store older than its peers knew; new life");
    this.replica = life;
    this.renewing = false;
    this.out.clear();
    const pulled = [...this.in];
    for (const peer of this.d.port.linked()) this.linkUp(peer);
    for (const [peer, s] of pulled) if (this.in.get(peer) === s) this.hello(peer, s.replica);
  }

  private linkDown(peer: string): void {
    this.out.delete(peer);
    this.in.delete(peer);
  }

  private received(from: string, f: MeshFrame): void {
    if (this.disposed) return;
    switch (f.t) {
      case "hello":
        if (typeof f.replica === "string") this.hello(from, f.replica);
        return;
      case "pull":
        if (f.of === this.replica && typeof f.by === "string" && isSeq(f.from) && isSeq(f.gen)) {
          if (this.renewing) return;
          if (f.from > this.d.store.seq()) {
            void this.renew();
            return;
          }
          this.out.set(from, { peerReplica: f.by, gen: f.gen, cursor: f.from, inFlight: 0 });
          this.pump(from);
        }
        return;
      case "changes":
        this.changes(from, f);
        return;
      case "ack": {
        const s = this.out.get(from);
        if (s !== undefined && f.gen === s.gen && s.inFlight > 0) {
          s.inFlight--;
          this.pump(from);
        }
        return;
      }
      default:
        this.d.log.warn({ peer: from, t: f.t }, "kv replication: unknown frame ignored");
    }
  }

  /** The peer's store life is known: pull its sequence past what we hold of
   * that life (all of it, for a store we never heard from). */
  private hello(peer: string, replica: string): void {
    const mark = this.d.store.mark(peer);
    const from = mark !== undefined && mark.replica === replica ? mark.seq : 0;
    const gen = ++this.pulls;
    this.in.set(peer, { replica, gen, chain: Promise.resolve() });
    this.d.port.send(peer, { mesh: "kv", t: "pull", of: replica, by: this.replica, from, gen });
  }

  private changes(peer: string, f: MeshFrame): void {
    const s = this.in.get(peer);
    if (s === undefined || f.gen !== s.gen || f.replica !== s.replica || !isSeq(f.upto)) return;
    if (!Array.isArray(f.e)) return;
    const versions = parseEntries(f.e, (why) =>
      this.d.log.warn({ peer, why }, "kv replication: malformed entry ignored"),
    );
    const upto = f.upto;
    this.applying++;
    s.chain = s.chain.then(async () => {
      try {
        await this.apply(peer, s, versions, upto);
      } finally {
        this.applying--;
      }
    });
  }

  /** Commit one frame with the peer's mark (unless a newer pull replaced
   * this one), then acknowledge it. */
  private async apply(peer: string, s: Inbound, versions: VersionIn[], upto: number) {
    const { replica, gen } = s;
    if (this.in.get(peer) !== s || this.disposed) return;
    try {
      await this.merge(versions, replica, () => this.d.store.setMark(peer, { replica, seq: upto }));
    } catch (error) {
      // Nothing past the last mark is taken as held: pull again from it.
      this.d.log.warn({ err: error, peer }, "kv replication: received changes not stored");
      if (this.in.get(peer) === s && !this.disposed) this.hello(peer, replica);
      return;
    }
    this.d.port.send(peer, { mesh: "kv", t: "ack", gen, upto });
  }

  /**
   * Store versions received from replica `origin` by the rule local writes
   * follow (`kvWins`), in one commit with `alongside` (the peer's mark), so
   * that what is acknowledged is on disk. Subscribers hear the ones that win
   * as they hear a local change, a few frames per namespace rather than one
   * per key; what won joins this replica's sequence and travels on.
   */
  private async merge(versions: VersionIn[], origin: string, alongside: () => void) {
    const now = this.d.clock.now();
    let stored = 0;
    const heard = await this.d.commit(() => {
      const out: { ns: string; entry: KvEntry; weight: number }[] = [];
      for (const v of versions) {
        const r = this.d.store.apply(v.ns, v.key, v.json, v.updated_at, origin, now);
        if (!r.won) continue;
        stored++;
        // A key is at most 256 UTF-16 units, 4 bytes each in JSON at worst.
        if (v.json !== null) {
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
    const frames = new Map<string, { entries: KvEntry[]; weight: number }[]>();
    for (const h of heard) {
      const list = frames.get(h.ns) ?? [];
      frames.set(h.ns, list);
      const last = list.at(-1);
      if (last !== undefined && last.weight + h.weight <= ANNOUNCE_BYTES) {
        last.entries.push(h.entry);
        last.weight += h.weight;
      } else list.push({ entries: [h.entry], weight: h.weight });
    }
    for (const [ns, list] of frames) for (const f of list) this.d.kv.announce(ns, f.entries);
    if (stored > 0) this.schedulePump();
  }

  /** Send each peer's next chunks on the next turn, so that the writes of
   * one turn travel together. */
  private schedulePump(): void {
    if (this.pumpQueued || this.out.size === 0) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      for (const peer of this.out.keys()) this.pump(peer);
    });
  }

  private pump(peer: string): void {
    const s = this.out.get(peer);
    while (s !== undefined && !this.disposed && s.inFlight < WINDOW) {
      const rows = this.d.store.changesSince(s.cursor, CHUNK_ROWS, CHUNK_BYTES);
      if (rows.length === 0) return;
      const { entries, upto } = chunk(rows, s.peerReplica);
      s.cursor = upto;
      // Versions the peer sent us are not sent back; its mark catches up
      // with the next frame that carries anything. A long run of them is
      // read a chunk per turn.
      if (entries.length === 0) {
        setImmediate(() => this.pump(peer));
        return;
      }
      const frame = {
        mesh: "kv",
        t: "changes",
        replica: this.replica,
        gen: s.gen,
        upto,
        e: entries,
      };
      if (!this.d.port.send(peer, frame)) {
        this.out.delete(peer);
        return;
      }
      s.inFlight++;
    }
  }
}

/** Entries for one frame from rows of the sequence, within CHUNK_BYTES;
 * `upto`: the last row looked at. */
function chunk(rows: KvChange[], skipOrigin: string): { entries: Entry[]; upto: number } {
  const entries: Entry[] = [];
  let weight = 0;
  let upto = rows[0]!.seq;
  for (const r of rows) {
    if (r.origin !== skipOrigin) {
      const w =
        (r.json === null ? 0 : Buffer.byteLength(r.json)) +
        Buffer.byteLength(JSON.stringify(r.key)) +
        r.ns.length +
        32;
      if (entries.length > 0 && weight + w > CHUNK_BYTES) break;
      weight += w;
      entries.push(
        r.json === null
          ? [r.ns, r.key, r.updated_at]
          : [r.ns, r.key, r.updated_at, JSON.parse(r.json)],
      );
    }
    upto = r.seq;
  }
  return { entries, upto };
}

/** Versions from a peer's entries. The peer is authenticated and runs this
 * build, but a bad entry is still refused alone rather than stored. */
function parseEntries(raw: unknown[], bad: (why: string) => void): VersionIn[] {
  const out: VersionIn[] = [];
  for (const e of raw) {
    if (
      !Array.isArray(e) ||
      (e.length !== 3 && e.length !== 4) ||
      !isValid(Namespace, e[0]) ||
      !isValid(KvKey, e[1]) ||
      !isValid(Timestamp, e[2])
    ) {
      bad("shape");
      continue;
    }
    const json = e.length === 4 ? JSON.stringify(e[3]) : null;
    if (json === undefined) {
      bad("value");
      continue;
    }
    out.push({ ns: e[0] as string, key: e[1] as string, updated_at: e[2] as number, json });
  }
  return out;
}

function isSeq(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}
