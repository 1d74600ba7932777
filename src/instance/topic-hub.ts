import { MAX_FRAME_BYTES, VALUE_TOPIC_INTERVAL_MS } from "../contract/constants.js";
import { encodeTopicFrame, topicDataBudget, utf8Length } from "../contract/frames.js";
import {
  type ParsedTopic,
  parseTopic,
  TOPIC_ATTRIBUTES,
  type TopicAttributes,
  type TopicKind,
} from "../contract/topics.js";
import type { Logger } from "../util/logger.js";
import type { Connection } from "./wire/connection.js";

/** Computes the current value of a value topic (`whole`/`per_instance_whole`)
 * from the facts, on demand: values are derived, never stored. A value is one
 * frame — it cannot be split — so the provider makes it fit `budget` bytes of
 * serialised data. */
export type ValueProvider = (param: string | undefined, budget: number) => unknown;

/** A value provider that serialises the value itself (it keeps parts of it
 * serialised between changes). */
export type ValueJsonProvider = (param: string | undefined, budget: number) => string;

/**
 * How many bytes of value frames one topic name may send to each subscriber
 * (an instance rule, beside §5.5's 100 ms): a token bucket holding up to
 * `burstBytes`, refilled at `bytesPerSecond`. A frame waits until the bucket
 * holds its size, and what changes meanwhile folds into it. A value changing
 * now and then is never held back; a large one changing all the time (5,000
 * sessions coming and going under a megabyte-sized `last_live`) reaches a
 * watcher every several seconds instead of ten times a second, still ending on
 * the latest value. The burst holds two frames of the largest size, so the
 * largest frame always fits it.
 */
export const VALUE_TOPIC_PACE = {
  bytesPerSecond: 64 * 1024,
  burstBytes: 2 * MAX_FRAME_BYTES,
} as const;

/** Provides the snapshot of an element/append topic for one subscriber. */
export type SnapshotProvider = (conn: Connection, param: string | undefined) => unknown;

/** Told once a snapshot's frames reached the OS side (ok) or the connection
 * ended first, with the data the provider gave. */
export type SnapshotWritten = (conn: Connection, ok: boolean, data: unknown) => void;

/** The values peers sent for the `per_instance_whole` topics (contract
 * §8.1 relay), as the hub reads them. */
export interface RelayedValues {
  /** Each peer's latest value of topic `name`: [instance, data JSON]. */
  held(name: string): Iterable<readonly [string, string]>;
  /** Whether `conn` is a mesh link: a link gets only this instance's own
   * frames, never another's passed on (DR-0048). */
  isLink(conn: Connection): boolean;
}

/** A topic's own rules over its subscriptions (messaging's inbox lane):
 * told as each begins (before its snapshot) and ends (however it ends). */
export interface SubscriptionRules {
  subscribed(conn: Connection, receiver: boolean): void;
  unsubscribed(conn: Connection): void;
}

/** What the hub keeps of one subscribing connection. */
interface Subscriber {
  /** Topic names it holds. */
  readonly topics: Set<string>;
  /** The version of this instance's value it was sent last, per value topic
   * name, for suppression: a value equal to the last one sent is not sent
   * again (the snapshot counts as sent). */
  readonly versions: Map<string, number>;
  /** The last relayed frame sent per `valueKey(name, instance)` of a peer,
   * for the same suppression. */
  readonly lastValues: Map<string, string>;
}

/** This instance's value of one held value topic name, as last computed. */
interface Current {
  /** Its delta frame line: one text for every subscriber. */
  line: string;
  /** Goes up whenever the line changes. */
  version: number;
}

/** The byte budget of one value topic name (VALUE_TOPIC_PACE). */
interface Bucket {
  /** What it holds, as of `at`. */
  bytes: number;
  at: number;
  /** Not recomputed before then: a frame the size of the last one would not
   * fit before. */
  due: number;
}

/**
 * The one mechanism that holds every topic (contract §5.5): its subscribers,
 * a single entry point for new values, and suppression of repeated values.
 * Engines register what they serve (`provideValue`, `provideSnapshot`);
 * subscriptions belong to a connection and end with it.
 *
 * Value topics are recomputed lazily: `invalidate()` marks a name dirty and the
 * hub recomputes it at most once per 100 ms, however often the facts change —
 * a peers list is built ten times a second at most, not once per request —
 * and a large value changing all the time less often still (VALUE_TOPIC_PACE).
 * Each value is framed once for all its subscribers, which remember only the
 * version they were sent.
 */
export class TopicHub {
  private readonly subscribers = new Map<string, Set<Connection>>();
  private readonly held = new Map<Connection, Subscriber>();
  /** Topics with rules of their own, by name. */
  private readonly rules = new Map<string, SubscriptionRules>();
  private readonly heldListeners: ((name: string, count: number) => void)[] = [];
  private readonly values: Partial<Record<TopicKind, ValueJsonProvider>> = {};
  /** Per held value topic name: its value as last computed and its byte
   * budget. Dropped with its last subscriber. */
  private readonly current = new Map<string, Current>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly snapshots: Partial<Record<TopicKind, SnapshotProvider>> = {};
  private readonly snapshotsWritten: Partial<Record<TopicKind, SnapshotWritten>> = {};
  private relayed: RelayedValues | undefined;
  private readonly dirty = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushAt = 0;
  private lastFlushAt = 0;
  /** Frames refused because a subscriber was not keeping up, for the log. */
  refusedFrames = 0;

  constructor(
    private readonly instanceId: string,
    private readonly log: Logger,
  ) {}

  /** Serve a value topic kind, computed from the facts on demand. */
  provideValue(kind: TopicKind, provider: ValueProvider): void {
    this.values[kind] = (param, budget) => JSON.stringify(provider(param, budget));
  }

  /** Serve a value topic kind whose provider serialises the value itself. */
  provideValueJson(kind: TopicKind, provider: ValueJsonProvider): void {
    this.values[kind] = provider;
  }

  /** Serve an element/append topic kind: its snapshot per subscriber, and
   * (optionally) hear when each snapshot reached the subscriber's socket. */
  provideSnapshot(kind: TopicKind, provider: SnapshotProvider, written?: SnapshotWritten): void {
    this.snapshots[kind] = provider;
    if (written !== undefined) this.snapshotsWritten[kind] = written;
  }

  /** Pass the peers' values of `per_instance_whole` topics to subscribers:
   * one frame per instance after the snapshot, then `relayedChanged`. */
  relayFrom(values: RelayedValues): void {
    this.relayed = values;
  }

  /** A peer's value of topic `name` changed: its subscribers get it through
   * the same egress as local values (folded per topic × instance, paced). */
  relayedChanged(name: string, instance: string, dataJson: string): void {
    const set = this.subscribers.get(name);
    if (set === undefined || this.relayed === undefined) return;
    const line = this.frameLine(name, dataJson, false, instance);
    if (line === undefined) return;
    for (const conn of set) {
      const sub = this.held.get(conn);
      if (sub === undefined || this.relayed.isLink(conn)) continue;
      this.sendRelayed(conn, sub, name, instance, line, false);
    }
  }

  private sendRelayed(
    conn: Connection,
    sub: Subscriber,
    name: string,
    instance: string,
    line: string,
    first: boolean,
  ): void {
    const key = this.valueKey(name, instance);
    if (!first && sub.lastValues.get(key) === line) return;
    sub.lastValues.set(key, line);
    conn.outbound.value(key, line, first);
  }

  /** Subscribers of `name` that are not mesh links. */
  localHolders(name: string): number {
    let n = 0;
    for (const conn of this.subscribers.get(name) ?? []) if (!this.relayed?.isLink(conn)) n++;
    return n;
  }

  /** Whether this build can serve a topic kind at all. */
  serves(kind: TopicKind): boolean {
    const { granularity } = TOPIC_ATTRIBUTES[kind];
    if (granularity === "event") return true;
    if (granularity === "whole" || granularity === "per_instance_whole") return kind in this.values;
    return kind in this.snapshots;
  }

  private subscriber(conn: Connection): Subscriber {
    let sub = this.held.get(conn);
    if (sub === undefined) {
      sub = { topics: new Set(), versions: new Map(), lastValues: new Map() };
      this.held.set(conn, sub);
      conn.onClose(() => this.dropConnection(conn));
    }
    return sub;
  }

  /** Add a subscription to a defined topic name and send its snapshot (none
   * for `event` topics). `receiver` is passed to the topic's own rules (an
   * inbox subscription that is a one-off take receives nothing further). */
  subscribe(conn: Connection, topic: ParsedTopic, receiver = true): void {
    // Closed while its request waited (a fresh read): nothing to hold, and
    // its close listeners have run already.
    if (conn.isClosed) return;
    const { name, kind, param } = topic;
    const sub = this.subscriber(conn);
    const set = this.subscribers.get(name) ?? new Set();
    set.add(conn);
    this.subscribers.set(name, set);
    sub.topics.add(name);
    for (const l of this.heldListeners) l(name, set.size);
    const { granularity } = TOPIC_ATTRIBUTES[kind];
    this.rules.get(name)?.subscribed(conn, receiver);
    if (granularity === "event") return;
    if (granularity === "whole" || granularity === "per_instance_whole") {
      // Fresh, as before any change is known: a provider's facts may have
      // moved without an invalidate (time passing).
      const json = this.valueJson(name, kind, param);
      const cur = this.computed(name, json);
      const line = cur && this.frameLine(name, json, true);
      if (cur === undefined || line === undefined) return;
      // Remember the value's version, so an unchanged value is suppressed
      // although the snapshot line carried `snapshot: true`.
      sub.versions.set(name, cur.version);
      conn.outbound.value(this.valueKey(name), line, true);
      // Then each peer's value, as it sent it, `instance` kept (§8.1).
      if (granularity === "per_instance_whole" && this.relayed && !this.relayed.isLink(conn)) {
        for (const [instance, json] of this.relayed.held(name)) {
          const relayed = this.frameLine(name, json, false, instance);
          if (relayed !== undefined) this.sendRelayed(conn, sub, name, instance, relayed, true);
        }
      }
      return;
    }
    const data = this.snapshots[kind]!(conn, param);
    // The first frames of the subscription: never refused, and queued behind
    // whatever already waits, so a resubscribe's snapshot cannot overtake
    // messages handed over earlier. Each part fits a frame by construction.
    const attrs = TOPIC_ATTRIBUTES[kind] as TopicAttributes;
    const list = (attrs.elements ?? attrs.append)?.list;
    const budget = topicDataBudget(name, this.instanceId);
    // An append snapshot may carry no list at all (`transcript`: a size).
    const parts =
      list !== undefined && (data as Record<string, unknown>)[list] === undefined
        ? [JSON.stringify(data)]
        : snapshotChunks(data, list, budget, (n) => this.tooLarge(name, n));
    const lines = parts.flatMap((json, i) => this.frameLine(name, json, i === 0) ?? []);
    const written = this.snapshotsWritten[kind];
    // Frames reach the socket in order: the last one written is all written.
    const done = written && ((ok: boolean) => written(conn, ok, data));
    let sent = lines.length > 0;
    lines.forEach((line, i) => {
      sent = conn.outbound.ordered(line, true, i === lines.length - 1 ? done : undefined);
    });
    if (!sent) done?.(false);
  }

  /** A value topic's current value, serialised to fit one frame. */
  private valueJson(name: string, kind: TopicKind, param: string | undefined): string {
    return this.values[kind]!(param, topicDataBudget(name, this.instanceId));
  }

  /** Record `json` as the current value of `name`: a new version when it
   * differs from the last one computed. A change found outside a flush (a
   * snapshot) is flushed to the other subscribers too. Undefined when it
   * cannot be framed. */
  private computed(name: string, json: string, flushing = false): Current | undefined {
    const line = this.frameLine(name, json, false);
    if (line === undefined) return undefined;
    let cur = this.current.get(name);
    if (cur?.line === line) return cur;
    cur = { line, version: (cur?.version ?? 0) + 1 };
    this.current.set(name, cur);
    if (!flushing && (this.subscribers.get(name)?.size ?? 0) > 1) this.invalidate(name);
    return cur;
  }

  unsubscribe(conn: Connection, name: string): void {
    const set = this.subscribers.get(name);
    if (set?.delete(conn)) for (const l of this.heldListeners) l(name, set.size);
    if (set?.size === 0) this.subscribers.delete(name);
    if (set === undefined || set.size === 0) {
      this.current.delete(name);
      this.buckets.delete(name);
      this.dirty.delete(name);
    }
    const sub = this.held.get(conn);
    sub?.topics.delete(name);
    sub?.versions.delete(name);
    conn.outbound.forget(this.valueKey(name));
    for (const key of sub?.lastValues.keys() ?? []) {
      if (!key.startsWith(`${name}\u0000`)) continue;
      sub?.lastValues.delete(key);
      conn.outbound.forget(key);
    }
    this.rules.get(name)?.unsubscribed(conn);
  }

  /** Give topic `name` rules of its own over its subscriptions. */
  governSubscriptions(name: string, rules: SubscriptionRules): void {
    this.rules.set(name, rules);
  }

  /** End every subscription of a connection that went away. */
  private dropConnection(conn: Connection): void {
    const sub = this.held.get(conn);
    if (sub === undefined) return;
    for (const name of [...sub.topics]) this.unsubscribe(conn, name);
    this.held.delete(conn);
  }

  /**
   * Publish an ordered frame (element, append, event) to every subscriber of
   * `name`; returns how many refused it. Refusals are counted and logged:
   * generation 3 has no code to report them for best-effort pushes.
   */
  publish(name: string, data: unknown): number {
    const set = this.subscribers.get(name);
    if (set === undefined) return 0;
    const line = this.frameLine(name, JSON.stringify(data), false);
    if (line === undefined) return set.size;
    let refused = 0;
    for (const conn of set) {
      if (!conn.outbound.ordered(line)) {
        refused++;
        this.countRefused(name, conn);
      }
    }
    return refused;
  }

  /** Count and log a frame refused to a subscriber not keeping up. */
  countRefused(name: string, conn: Connection): void {
    this.refusedFrames++;
    this.log.warn(
      {
        topic: name,
        connection: conn.id,
        waiting: conn.outbound.waiting(),
        refused_total: this.refusedFrames,
      },
      "frame refused: subscriber is not keeping up",
    );
  }

  /** Mark a value topic changed; it is recomputed and sent at most every
   * 100 ms, and within its byte budget (VALUE_TOPIC_PACE). Names nobody holds
   * cost nothing. */
  invalidate(name: string): void {
    if (!this.subscribers.has(name)) return;
    this.dirty.add(name);
    const due = this.buckets.get(name)?.due ?? 0;
    this.scheduleFlush(Math.max(this.lastFlushAt + VALUE_TOPIC_INTERVAL_MS, due));
  }

  /** Flush at `at`, or earlier when a flush is set for earlier already. */
  private scheduleFlush(at: number): void {
    if (this.flushTimer !== undefined && this.flushAt <= at) return;
    clearTimeout(this.flushTimer);
    this.flushAt = at;
    this.flushTimer = setTimeout(() => this.flush(), Math.max(0, at - Date.now()));
  }

  /** Mark every held value topic of a kind changed. */
  invalidateKind(kind: TopicKind): void {
    for (const name of this.subscribers.keys()) {
      if (parseTopic(name)?.kind === kind) this.invalidate(name);
    }
  }

  /** Recompute the dirty names and send what changed, one line for every
   * subscriber; a name over its byte budget stays dirty until the budget
   * holds its frame. */
  private flush(): void {
    this.flushTimer = undefined;
    const now = Date.now();
    this.lastFlushAt = now;
    let next = Number.POSITIVE_INFINITY;
    for (const name of [...this.dirty]) {
      const set = this.subscribers.get(name);
      const topic = parseTopic(name);
      if (set === undefined || topic === undefined) {
        this.dirty.delete(name);
        continue;
      }
      const bucket = this.bucket(name, now);
      if (bucket.due > now) {
        next = Math.min(next, bucket.due);
        continue;
      }
      this.dirty.delete(name);
      const cur = this.computed(name, this.valueJson(name, topic.kind, topic.param), true);
      if (cur === undefined) continue;
      let behind = false;
      for (const conn of set) behind ||= this.held.get(conn)?.versions.get(name) !== cur.version;
      if (!behind) continue;
      const size = Math.min(cur.line.length, VALUE_TOPIC_PACE.burstBytes);
      if (bucket.bytes < size) {
        bucket.due = now + this.refillMs(bucket, size);
        this.dirty.add(name);
        next = Math.min(next, bucket.due);
        continue;
      }
      bucket.bytes -= size;
      bucket.due = now + this.refillMs(bucket, size);
      for (const conn of set) {
        const sub = this.held.get(conn);
        if (sub === undefined || sub.versions.get(name) === cur.version) continue;
        sub.versions.set(name, cur.version);
        conn.outbound.value(this.valueKey(name), cur.line);
      }
    }
    if (this.dirty.size > 0) this.scheduleFlush(Math.max(next, now + VALUE_TOPIC_INTERVAL_MS));
  }

  /** The byte budget of `name`, refilled up to `now`. Sizes are counted in
   * UTF-16 units: a measure of the rate, not the wire's bytes. */
  private bucket(name: string, now: number): Bucket {
    const { bytesPerSecond, burstBytes } = VALUE_TOPIC_PACE;
    let b = this.buckets.get(name);
    if (b === undefined) {
      b = { bytes: burstBytes, at: now, due: 0 };
      this.buckets.set(name, b);
    }
    b.bytes = Math.min(burstBytes, b.bytes + ((now - b.at) * bytesPerSecond) / 1000);
    b.at = now;
    return b;
  }

  /** Ms until `b` holds `size` bytes (0 when it does). */
  private refillMs(b: Bucket, size: number): number {
    return Math.max(0, Math.ceil(((size - b.bytes) * 1000) / VALUE_TOPIC_PACE.bytesPerSecond));
  }

  /** Told whenever the number of subscribers of a name changed: upstream
   * work runs only while a topic is held (contract §5.5). */
  onHeld(listener: (name: string, count: number) => void): void {
    this.heldListeners.push(listener);
  }

  /** Subscribers of a name, for tests and metrics. */
  count(name: string): number {
    return this.subscribers.get(name)?.size ?? 0;
  }

  private valueKey(name: string, instance = this.instanceId): string {
    return `${name}\u0000${instance}`;
  }

  /** A frame line, or undefined (logged) when it would exceed MAX_FRAME_BYTES. */
  /** A frame line of `name` carrying `dataJson` (not a snapshot), or
   * undefined when it cannot be framed (logged). */
  deltaLine(name: string, dataJson: string): string | undefined {
    return this.frameLine(name, dataJson, false);
  }

  private frameLine(
    name: string,
    dataJson: string,
    snapshot: boolean,
    instance = this.instanceId,
  ): string | undefined {
    const line = encodeTopicFrame(name, instance, dataJson, snapshot);
    if (line === undefined) this.tooLarge(name, 1, utf8Length(dataJson));
    return line;
  }

  /** Frames or elements left unsent because they exceed MAX_FRAME_BYTES. */
  private tooLarge(topic: string, count: number, dataBytes?: number): void {
    this.log.error(
      { topic, count, data_bytes: dataBytes },
      "left unsent: larger than MAX_FRAME_BYTES",
    );
  }

  dispose(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }
}

/**
 * An element snapshot as serialised `data` parts that each fit `budget` bytes.
 * The first part goes out as the snapshot, the rest as ordinary element
 * frames: folding upserts elements by id, so the subscriber holds exactly the
 * same value as from one frame — which MAX_FRAME_BYTES would not allow for a
 * large inbox or namespace. An element too large for a frame on its own is
 * left out and counted to `leftOut`. `list` names the member holding the
 * elements (absent: `data` is the array).
 */
export function snapshotChunks(
  data: unknown,
  list: string | undefined,
  budget = MAX_FRAME_BYTES - 1024,
  leftOut: (count: number) => void = () => {},
): string[] {
  const elements = (
    list === undefined ? data : (data as Record<string, unknown>)[list]
  ) as unknown[];
  // The data around its list, split where the elements go: JSON never holds a
  // raw NUL, so the slot cannot collide with anything serialised.
  const slot = "\u0000";
  const marker = "\u0000snapshot elements\u0000";
  const shell =
    list === undefined
      ? `[${slot}]`
      : JSON.stringify({ ...(data as object), [list]: marker }).replace(
          JSON.stringify(marker),
          `[${slot}]`,
        );
  const [head, tail] = shell.split(slot) as [string, string];
  const room = budget - utf8Length(head) - utf8Length(tail);
  const chunks: string[] = [];
  let parts: string[] = [];
  let bytes = 0;
  let skipped = 0;
  for (const element of elements) {
    const json = JSON.stringify(element);
    const size = utf8Length(json) + 1;
    if (size > room) {
      skipped++;
      continue;
    }
    if (parts.length > 0 && bytes + size > room) {
      chunks.push(`${head}${parts.join(",")}${tail}`);
      parts = [];
      bytes = 0;
    }
    parts.push(json);
    bytes += size;
  }
  chunks.push(`${head}${parts.join(",")}${tail}`);
  if (skipped > 0) leftOut(skipped);
  return chunks;
}
