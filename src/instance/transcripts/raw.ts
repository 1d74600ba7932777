import { open } from "node:fs/promises";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { topicDataBudget, utf8Length } from "../../contract/frames.js";
import type { TranscriptDeltaData } from "../../contract/transcripts.js";
import type { TranscriptLine } from "../../harness/transcript-lines.js";
import type { TopicHub } from "../topic-hub.js";
import type { FeedConsumer, FeedInfo } from "./feeds.js";

// Raw transcripts (contract §4.3.3 `transcript_read`, §5.4 `transcript:<sid>`):
// whole lines by byte offset, the same offsets for paged reads and live
// frames so the two join seamlessly. A line too large for a frame is left out
// of `lines` while the offsets still cover it: a reader sees the hole in the
// bytes and no frame ever exceeds MAX_FRAME_BYTES.

/** The most raw bytes one `transcript_read` reply carries. */
export const TRANSCRIPT_READ_MAX_BYTES = 256 * 1024;

/** Room for a reply's lines inside one frame (the envelope is small). */
const REPLY_BUDGET = MAX_FRAME_BYTES - 4096;

/** JSON bytes one line adds to an array of strings. */
function encodedBytes(text: string): number {
  return utf8Length(JSON.stringify(text)) + 1;
}

/** Publishes the appends of a session's main transcript on `transcript:<sid>`. */
export class RawPublisher implements FeedConsumer {
  private readonly name: string;
  private readonly budget: number;

  /** `fromStart`: a subscriber was told size 0 before the file existed, so
   * the catch-up is published too. */
  constructor(
    info: FeedInfo,
    private readonly hub: TopicHub,
    instanceId: string,
    private readonly fromStart = false,
  ) {
    this.name = `transcript:${info.sid}`;
    // Room for the lines once the frame's other members are written.
    this.budget = topicDataBudget(this.name, instanceId) - 128 - utf8Length(info.sid);
  }

  lines(batch: readonly TranscriptLine[], caughtUp: boolean): void {
    if (!caughtUp && !this.fromStart) return;
    if (this.hub.count(this.name) === 0) return;
    const sid = this.name.slice("transcript:".length);
    let frame: TranscriptDeltaData | undefined;
    let bytes = 0;
    const last = batch.at(-1)!;
    const size = last.offset + last.bytes;
    for (const line of batch) {
      const cost = line.oversized ? Number.POSITIVE_INFINITY : encodedBytes(line.text);
      if (frame !== undefined && cost !== Number.POSITIVE_INFINITY && bytes + cost > this.budget) {
        this.hub.publish(this.name, frame);
        frame = undefined;
      }
      if (frame === undefined) {
        frame = { sid, lines: [], start: line.offset, end: line.offset, size };
        bytes = 0;
      }
      // A line no frame can carry is covered by the offsets alone.
      if (cost <= this.budget) {
        frame.lines.push(line.text);
        bytes += cost;
      }
      frame.end = line.offset + line.bytes;
    }
    if (frame !== undefined) this.hub.publish(this.name, frame);
  }

  reset(): void {
    // Offsets restart at 0: a subscriber sees `start` go back and reads again.
  }
}

/** One page of `transcript_read`. */
export interface TranscriptPage {
  lines: string[];
  start: number;
  end: number;
  size: number;
}

/**
 * The whole lines of a file that end at or before `before` (default: its
 * end), newest kept, about `maxBytes` of them, oldest first. Reads only the
 * window it returns (and, for a single line longer than the window, the
 * bytes back to that line's start, in chunks), never the file.
 */
export async function readPage(
  path: string,
  before: number | undefined,
  maxBytes: number,
): Promise<TranscriptPage> {
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    const limit = Math.min(before ?? size, size);
    const window = Math.max(1, Math.min(maxBytes, TRANSCRIPT_READ_MAX_BYTES));
    // The end: just past the last newline at or before `limit`.
    const end = await lastNewlineBefore(handle, limit, window);
    if (end === 0) return { lines: [], start: 0, end: 0, size };
    const winStart = Math.max(0, end - window);
    const buf = Buffer.allocUnsafe(end - winStart);
    await readFully(handle, buf, winStart);
    // The first bytes of the window belong to a line that began earlier,
    // unless the window starts the file (or right after a newline).
    let first = 0;
    if (winStart > 0) {
      const before1 = Buffer.allocUnsafe(1);
      await readFully(handle, before1, winStart - 1);
      if (before1[0] !== 10) first = buf.indexOf(10) + 1;
    }
    if (first >= buf.length) {
      // One line longer than the window: page past it by offsets alone.
      const start = await lastNewlineBefore(handle, end - 1, window);
      return { lines: [], start, end, size };
    }
    const lines = buf
      .subarray(first, buf.length - 1)
      .toString("utf8")
      .split("\n");
    // Keep the newest lines that fit one reply frame.
    let start = winStart + first;
    let bytes = 0;
    let keep = lines.length;
    for (let i = lines.length - 1; i >= 0; i--) {
      const cost = encodedBytes(lines[i]!);
      if (bytes + cost > REPLY_BUDGET) break;
      bytes += cost;
      keep = i;
    }
    for (let i = 0; i < keep; i++) start += Buffer.byteLength(lines[i]!) + 1;
    return { lines: lines.slice(keep), start, end, size };
  } finally {
    await handle.close();
  }
}

type Handle = Awaited<ReturnType<typeof open>>;

async function readFully(handle: Handle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await handle.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) {
      buf.fill(0, done);
      return;
    }
    done += bytesRead;
  }
}

/** The offset just past the last newline strictly before `limit` (0 when
 * there is none), scanning backwards in chunks. */
async function lastNewlineBefore(handle: Handle, limit: number, chunk: number): Promise<number> {
  const buf = Buffer.allocUnsafe(Math.max(1, chunk));
  let hi = limit;
  while (hi > 0) {
    const lo = Math.max(0, hi - buf.length);
    const view = buf.subarray(0, hi - lo);
    await readFully(handle, view, lo);
    const nl = view.lastIndexOf(10);
    if (nl >= 0) return lo + nl + 1;
    hi = lo;
  }
  return 0;
}
