import { performance } from "node:perf_hooks";
import { EGRESS_MAX_WAITING, VALUE_TOPIC_INTERVAL_MS } from "../contract/constants.js";
import type { Channel } from "./transport/channel.js";

/** Above this many bytes waiting to reach the OS, the receiver counts as not
 * keeping up and frames wait in this queue instead. */
export const HIGH_WATER_BYTES = 64 * 1024;

/** A bound on bytes of ordered frames waiting, beside the 256-frame bound, so a
 * slow reader of large messages holds at most this much memory. */
export const MAX_WAITING_BYTES = 16 * 1024 * 1024;

interface Waiting {
  line: string;
  /** Set for value frames: the (topic × instance) they fold under. */
  key?: string;
}

interface Pace {
  lastSentAt: number;
  pending?: string;
  timer?: NodeJS.Timeout;
}

/**
 * One receiver's topic egress (contract §5.5, with our pace rule).
 *
 * - Ordered frames (element, append, event: inbox, notify, kv, transcripts) are
 *   written at once while the receiver keeps reading — never behind a timer.
 *   When it stops reading, up to 256 wait in order; beyond that `ordered()`
 *   refuses, and the publisher decides (an inbox message stays held and the
 *   sender hears `throttled`). Nothing accepted is dropped.
 * - Value frames (whole, per_instance_whole) are paced to one per 100 ms per
 *   (topic × instance); a newer value replaces a waiting one, keeping the
 *   waiting one's place in the queue, so the receiver gets the latest value.
 *
 * The single queue is what keeps the order: a frame never overtakes one
 * published before it.
 */
export class Egress {
  private queue: Waiting[] = [];
  private head = 0;
  private waitingOrdered = 0;
  private waitingBytes = 0;
  private readonly waitingValues = new Map<string, Waiting>();
  private readonly pace = new Map<string, Pace>();
  private disposed = false;
  /** Ordered frames refused so far (reported in the log by the publisher). */
  refused = 0;

  constructor(private readonly channel: Channel) {
    channel.onDrain(() => this.pump());
  }

  private blocked(): boolean {
    return this.head < this.queue.length || this.channel.backlog() > HIGH_WATER_BYTES;
  }

  /** Publish an ordered frame; false when refused because too many wait. */
  ordered(line: string): boolean {
    if (this.disposed) return false;
    if (!this.blocked()) {
      this.channel.write(line);
      return true;
    }
    if (
      this.waitingOrdered >= EGRESS_MAX_WAITING ||
      this.waitingBytes + line.length > MAX_WAITING_BYTES
    ) {
      this.refused++;
      return false;
    }
    this.queue.push({ line });
    this.waitingOrdered++;
    this.waitingBytes += line.length;
    return true;
  }

  /** Queue a frame that must not be refused (a subscription's snapshot: the
   * subscriber asked for it) but must not overtake frames already waiting. */
  always(line: string): void {
    if (this.disposed) return;
    if (!this.blocked()) {
      this.channel.write(line);
      return;
    }
    this.queue.push({ line });
    this.waitingOrdered++;
    this.waitingBytes += line.length;
  }

  /** Publish a value frame, paced per key. `first` marks a snapshot, which is
   * sent at once and starts the key's interval. */
  value(key: string, line: string, first = false): void {
    if (this.disposed) return;
    const now = performance.now();
    const p = this.pace.get(key);
    if (!first && p !== undefined && now - p.lastSentAt < VALUE_TOPIC_INTERVAL_MS) {
      p.pending = line;
      p.timer ??= setTimeout(
        () => {
          p.timer = undefined;
          const pending = p.pending;
          p.pending = undefined;
          if (pending !== undefined) this.emitValue(key, pending);
        },
        VALUE_TOPIC_INTERVAL_MS - (now - p.lastSentAt),
      );
      return;
    }
    if (p?.timer) {
      clearTimeout(p.timer);
      p.timer = undefined;
      p.pending = undefined;
    }
    this.emitValue(key, line);
  }

  private emitValue(key: string, line: string): void {
    const p = this.pace.get(key);
    if (p) p.lastSentAt = performance.now();
    else this.pace.set(key, { lastSentAt: performance.now() });
    const waiting = this.waitingValues.get(key);
    if (waiting !== undefined) {
      waiting.line = line;
      return;
    }
    if (!this.blocked()) {
      this.channel.write(line);
      return;
    }
    const entry = { line, key };
    this.queue.push(entry);
    this.waitingValues.set(key, entry);
  }

  /** Forget a key's pacing (its subscription ended). */
  forget(key: string): void {
    const p = this.pace.get(key);
    if (p?.timer) clearTimeout(p.timer);
    this.pace.delete(key);
  }

  /** Frames waiting for the receiver. */
  waiting(): number {
    return this.queue.length - this.head;
  }

  private pump(): void {
    while (this.head < this.queue.length && this.channel.backlog() <= HIGH_WATER_BYTES) {
      const entry = this.queue[this.head++]!;
      if (entry.key !== undefined) {
        this.waitingValues.delete(entry.key);
      } else {
        this.waitingOrdered--;
        this.waitingBytes -= entry.line.length;
      }
      this.channel.write(entry.line);
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const p of this.pace.values()) if (p.timer) clearTimeout(p.timer);
    this.pace.clear();
    this.queue = [];
    this.head = 0;
    this.waitingValues.clear();
  }
}
