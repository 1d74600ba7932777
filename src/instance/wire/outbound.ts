import { EGRESS_MAX_WAITING, VALUE_TOPIC_INTERVAL_MS } from "../../contract/constants.js";
import type { FrameReader, FrameWriter, Written } from "./transport.js";

/**
 * The back-pressure policy of a connection — the one place it is written.
 *
 * A peer keeps up while its writer holds at most `highWaterBytes` not yet
 * handed to the OS; frames go straight to the writer then. Past it, every frame
 * waits in the connection's one queue, in order, and what happens next depends
 * on its class:
 *
 * - `reply` (replies and connection events): never
 *   refused — each answers something the peer asked for, so their number is
 *   bounded by what it asks. When more than `pauseReadingBytes` of them wait,
 *   the connection stops reading the peer's requests until the queue is below
 *   half of that: a peer that never reads cannot grow the instance's memory.
 * - `ordered` (element, append and event topic frames: inbox, notify, kv,
 *   transcripts): at most `maxWaitingOrdered` frames and `maxWaitingBytes`
 *   wait; past that the frame is refused and its publisher decides. Nothing
 *   accepted is dropped. A subscription's snapshot is ordered too, but never
 *   refused: the subscriber asked for it. An inbox message refused while the
 *   peer is still making progress waits for room (its sender's reply waits
 *   with it; see the topic hub); only a peer that has not taken a single frame
 *   for `notReadingAfterMs` while frames wait counts as not reading.
 * - requests: at most `maxRequestsInFlight` of one peer's requests run at
 *   once; past that the connection stops reading it until half have been
 *   answered, so a sender whose replies wait is paced by the socket itself.
 *   Across every connection at most `maxRequestsInFlightInAll` run: past it,
 *   each connection that starts one more stops reading until half of them
 *   were answered — a burst from a thousand peers is paced by their sockets
 *   instead of growing the heap (1,000 × 100 sends: 540 MB at the peak
 *   before, 180 MB with it).
 * - `value` (whole / per_instance_whole topics: peers, session_status): paced
 *   to one frame per `VALUE_TOPIC_INTERVAL_MS` per (topic × instance); a newer
 *   value replaces a waiting one in its place, so the peer gets the latest.
 */
export const BACKPRESSURE = {
  highWaterBytes: 64 * 1024,
  maxWaitingOrdered: EGRESS_MAX_WAITING,
  maxWaitingBytes: 16 * 1024 * 1024,
  pauseReadingBytes: 4 * 1024 * 1024,
  notReadingAfterMs: 2000,
  maxRequestsInFlight: 1024,
  maxRequestsInFlightInAll: 4096,
} as const;

interface Waiting {
  line: string;
  /** Set for value frames: the (topic × instance) they fold under. */
  key?: string;
  /** A reply-class frame (counted against pausing, never refused). */
  reply?: true;
  /** Told whether the frame reached the OS side (FrameWriter.write). */
  done?: Written;
}

interface Pace {
  lastSentAt: number;
  pending?: string;
  timer?: NodeJS.Timeout;
}

/**
 * A connection's one outbound queue. Replies, events and topic frames share
 * it, which is what keeps their order: no frame overtakes one written before
 * it — a resubscribe's snapshot cannot overtake messages already handed over,
 * and a reply cannot overtake the frames its request caused.
 */
export class Outbound {
  private queue: Waiting[] = [];
  private head = 0;
  private waitingOrdered = 0;
  private waitingOrderedBytes = 0;
  private waitingReplyBytes = 0;
  private readingPaused = false;
  private readonly waitingValues = new Map<string, Waiting>();
  private readonly pace = new Map<string, Pace>();
  private disposed = false;
  /** When the peer last took frames (or frames started to wait). */
  private progressAt = 0;
  private progressListener: (() => void) | undefined;

  constructor(
    private readonly writer: FrameWriter,
    private readonly reader: Pick<FrameReader, "pause" | "resume">,
  ) {
    writer.onDrain(() => this.pump());
  }

  private blocked(): boolean {
    return this.head < this.queue.length || this.writer.backlog() > BACKPRESSURE.highWaterBytes;
  }

  /** A reply or a connection event. */
  reply(line: string): void {
    if (this.disposed) return;
    if (!this.blocked()) {
      this.writer.write(line);
      return;
    }
    this.enqueue({ line, reply: true });
    this.waitingReplyBytes += line.length;
    if (!this.readingPaused && this.waitingReplyBytes > BACKPRESSURE.pauseReadingBytes) {
      this.readingPaused = true;
      this.reader.pause();
    }
  }

  /** An ordered topic frame; false when refused because too many wait.
   * `snapshot` frames are never refused. An accepted frame's `done` is told
   * once whether it reached the OS side (false: the connection ended first);
   * a refused one's is never called. */
  ordered(line: string, snapshot = false, done?: Written): boolean {
    if (this.disposed) return false;
    if (!this.blocked()) {
      this.writer.write(line, done);
      return true;
    }
    if (
      !snapshot &&
      (this.waitingOrdered >= BACKPRESSURE.maxWaitingOrdered ||
        this.waitingOrderedBytes + line.length > BACKPRESSURE.maxWaitingBytes)
    ) {
      return false;
    }
    this.enqueue(done === undefined ? { line } : { line, done });
    this.waitingOrdered++;
    this.waitingOrderedBytes += line.length;
    return true;
  }

  /** A value frame, paced per key. `first` marks a snapshot, which is sent at
   * once and starts the key's interval. */
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
      this.writer.write(line);
      return;
    }
    const entry = { line, key };
    this.enqueue(entry);
    this.waitingValues.set(key, entry);
  }

  private enqueue(entry: Waiting): void {
    if (this.head === this.queue.length) this.progressAt = performance.now();
    this.queue.push(entry);
  }

  /** Whether frames wait and the peer has taken none for `notReadingAfterMs`. */
  notReading(): boolean {
    return (
      this.head < this.queue.length &&
      performance.now() - this.progressAt >= BACKPRESSURE.notReadingAfterMs
    );
  }

  /** Milliseconds since the peer last took frames while some wait (0 when
   * nothing waits). */
  stalledFor(): number {
    return this.head < this.queue.length ? performance.now() - this.progressAt : 0;
  }

  /** Told each time waiting frames moved on to the peer (one listener). */
  onProgress(listener: () => void): void {
    this.progressListener = listener;
  }

  /** Forget a key's pacing (its subscription ended). */
  forget(key: string): void {
    const p = this.pace.get(key);
    if (p?.timer) clearTimeout(p.timer);
    this.pace.delete(key);
  }

  /** Frames waiting for the peer. */
  waiting(): number {
    return this.queue.length - this.head;
  }

  private pump(): void {
    const before = this.head;
    while (this.head < this.queue.length && this.writer.backlog() <= BACKPRESSURE.highWaterBytes) {
      const entry = this.queue[this.head++]!;
      if (entry.key !== undefined) {
        this.waitingValues.delete(entry.key);
      } else if (entry.reply) {
        this.waitingReplyBytes -= entry.line.length;
      } else {
        this.waitingOrdered--;
        this.waitingOrderedBytes -= entry.line.length;
      }
      this.writer.write(entry.line, entry.done);
    }
    // A drain is the peer taking bytes; frames moving on (or none waiting)
    // is progress.
    const progressed = this.head !== before || this.head === this.queue.length;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.readingPaused && this.waitingReplyBytes < BACKPRESSURE.pauseReadingBytes / 2) {
      this.readingPaused = false;
      this.reader.resume();
    }
    if (progressed) {
      this.progressAt = performance.now();
      this.progressListener?.();
    }
  }

  /** Hand every waiting frame to the writer now, whatever its backlog: the
   * connection is ending and its transport flushes what it holds. */
  flush(): void {
    for (let i = this.head; i < this.queue.length; i++) {
      const entry = this.queue[i]!;
      this.writer.write(entry.line, entry.done);
    }
    this.queue = [];
    this.head = 0;
    this.waitingValues.clear();
    this.waitingOrdered = 0;
    this.waitingOrderedBytes = 0;
    this.waitingReplyBytes = 0;
  }

  dispose(): void {
    this.disposed = true;
    for (const p of this.pace.values()) if (p.timer) clearTimeout(p.timer);
    this.pace.clear();
    // Frames that never left: whoever waits on them hears so.
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.done?.(false);
    this.queue = [];
    this.head = 0;
    this.waitingValues.clear();
  }
}
