import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { LineFramer } from "../../net/line-framer.js";
import type { FrameHandlers } from "./transport.js";

/**
 * How reading is shared among connections — the one place it is written
 * (issue 23, item 2). One connection's backlog must not delay another's next
 * frame by more than a bounded slice:
 *
 * - the bytes read from a connection wait in its own queue, in order, and are
 *   split into frames only as they are served; the connections with bytes
 *   waiting are served round-robin, each at most `sliceFrames` frames (or
 *   `sliceBytes` read) per turn. A round is its own turn of the event loop
 *   and ends once it has run `roundMs`, so every socket is read again soon,
 *   however many connections wait;
 * - a connection alone in its round (no other has frames waiting) gets
 *   `aloneSliceFrames` instead: nobody waits behind it, and its frames run as
 *   one batch (one commit, one write per peer) instead of four;
 * - bytes that find their connection's queue empty, on a connection not
 *   served since the last round began, are served at once: an idle client
 *   never waits for a round, and a busy one gets no more than its slices;
 * - past `pauseAtBytes` waiting, the connection's socket is paused, so the
 *   kernel paces the sender and the queue stays bounded; it is resumed below
 *   `resumeBelowBytes`;
 * - a connection whose reader is paused by the layer above (its replies are
 *   not being drained, too many of its requests run) is not served at all
 *   until resumed: its bytes wait, and so does its socket.
 */
export const FAIR_SHARE = {
  roundMs: 0.25,
  sliceFrames: 8,
  aloneSliceFrames: 32,
  sliceBytes: 64 * 1024,
  pauseAtBytes: 64 * 1024,
  resumeBelowBytes: 32 * 1024,
} as const;

/** Where the bytes come from: a stream that can stop for a while. */
export interface ByteSource {
  pause(): void;
  resume(): void;
}

const END = Symbol("end");
/** Bytes read (consumed from `offset` on), the peer's end of input, or an
 * action to take in order with the frames (a WebSocket control frame). */
type Entry = Buffer | typeof END | (() => void);

/** The connections with frames waiting, served a slice each per round. */
class Rounds {
  /** Counts rounds; a connection's slice is renewed when it changes. */
  turn = 0;
  serving = false;
  /** This round serves one connection only (its slice is the larger one). */
  alone = false;
  private readonly ready = new Set<Inbound>();
  private scheduled = false;

  want(lane: Inbound): void {
    this.ready.add(lane);
    if (this.scheduled) return;
    this.scheduled = true;
    // An immediate, not a microtask: the poll phase reads every socket
    // (an idle client's frame among them) before the next round.
    setImmediate(this.round);
  }

  leave(lane: Inbound): void {
    this.ready.delete(lane);
  }

  private readonly round = (): void => {
    this.scheduled = false;
    this.turn++;
    this.serving = true;
    this.alone = this.ready.size === 1;
    const until = performance.now() + FAIR_SHARE.roundMs;
    try {
      // In the order they asked; a served lane asks again at the back (and is
      // not served twice: its slice is spent). Lanes a round had no time for
      // keep their place for the next one.
      let left = this.ready.size;
      for (const lane of this.ready) {
        if (left-- === 0) break;
        this.ready.delete(lane);
        lane.serveSlice();
        if (performance.now() >= until) break;
      }
    } finally {
      this.serving = false;
      this.alone = false;
      if (this.ready.size > 0 && !this.scheduled) {
        this.scheduled = true;
        setImmediate(this.round);
      }
    }
  };
}

const rounds = new Rounds();

/**
 * A connection's inbound side, whatever its transport: the transport pushes
 * bytes, and they reach the handlers as frames, in order, a slice at a time
 * (see FAIR_SHARE).
 */
export class Inbound {
  private readonly framer: LineFramer;
  private handlers: FrameHandlers | undefined;
  private queue: Entry[] = [];
  private head = 0;
  /** How far the entry at `head` (bytes) has been read. */
  private offset = 0;
  private waitingBytes = 0;
  /** Paused by the layer above. */
  private held = false;
  /** Too much waits: the source is paused until the queue runs low. */
  private full = false;
  private sourcePaused = false;
  private gone = false;
  private turn = -1;
  private servedFrames = 0;
  private servedBytes = 0;

  constructor(private readonly source: ByteSource) {
    this.framer = new LineFramer(
      MAX_FRAME_BYTES,
      (line) => {
        this.servedFrames++;
        this.handlers!.frame(line);
      },
      () => {
        this.servedFrames++;
        this.handlers!.oversized();
      },
    );
  }

  /** Start handing frames to `handlers` (they wait until then). */
  listen(handlers: FrameHandlers): void {
    this.handlers = handlers;
    this.wake();
  }

  /** Bytes the transport read. */
  push(bytes: Buffer): void {
    if (bytes.length === 0 || this.gone) return;
    this.waitingBytes += bytes.length;
    this.add(bytes);
    if (!this.full && this.waitingBytes > FAIR_SHARE.pauseAtBytes) {
      this.full = true;
      this.syncSource();
    }
  }

  /** An action to take after the frames read so far (and before later ones). */
  inOrder(action: () => void): void {
    this.add(action);
  }

  /** The peer sends no more (its FIN); `ended` follows the frames before it. */
  end(): void {
    this.add(END);
  }

  /** The stream is gone: bytes still waiting are dropped (nobody could read
   * their replies) and nothing is kept. */
  close(): void {
    if (this.gone) return;
    this.gone = true;
    this.queue = [];
    this.head = 0;
    this.waitingBytes = 0;
    this.framer.dispose();
    rounds.leave(this);
    this.handlers?.closed();
  }

  pause(): void {
    this.held = true;
    rounds.leave(this);
    this.syncSource();
  }

  resume(): void {
    this.held = false;
    this.syncSource();
    this.wake();
  }

  private add(entry: Entry): void {
    if (this.gone) return;
    const idle = this.head === this.queue.length;
    this.queue.push(entry);
    // Nothing was waiting, and this connection has not been served since the
    // last round began: serve it now. One that was has had its turn, and
    // waits for the next round like the others.
    if (idle && !rounds.serving && this.turn !== rounds.turn) this.serveSlice();
    else this.wake();
  }

  /** Serve this connection's slice of a round; what is left waits for the next. */
  serveSlice(): void {
    while (this.head < this.queue.length && this.servable() && this.slice()) {
      const entry = this.queue[this.head]!;
      if (!Buffer.isBuffer(entry)) {
        this.head++;
        if (entry === END) this.handlers!.ended();
        else entry();
        continue;
      }
      // One frame at a time: a handler may pause this connection.
      const at = this.framer.push(entry, this.offset, 1);
      this.servedBytes += at - this.offset;
      this.waitingBytes -= at - this.offset;
      if (at < entry.length) this.offset = at;
      else {
        this.head++;
        this.offset = 0;
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 64) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.full && this.waitingBytes < FAIR_SHARE.resumeBelowBytes) {
      this.full = false;
      this.syncSource();
    }
    this.wake();
  }

  private servable(): boolean {
    return this.handlers !== undefined && !this.held && !this.gone;
  }

  /** Whether this round's slice has room left (renewed each round). */
  private slice(): boolean {
    if (this.turn !== rounds.turn) {
      this.turn = rounds.turn;
      this.servedFrames = 0;
      this.servedBytes = 0;
    }
    const frames = rounds.alone ? FAIR_SHARE.aloneSliceFrames : FAIR_SHARE.sliceFrames;
    return this.servedFrames < frames && this.servedBytes < FAIR_SHARE.sliceBytes;
  }

  /** Ask for a round when something waits and may be served. */
  private wake(): void {
    if (this.head < this.queue.length && this.servable()) rounds.want(this);
  }

  private syncSource(): void {
    const pause = (this.held || this.full) && !this.gone;
    if (pause === this.sourcePaused) return;
    this.sourcePaused = pause;
    if (pause) this.source.pause();
    else this.source.resume();
  }
}
