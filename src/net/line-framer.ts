/** A partial frame's room starts at a page and doubles as the frame grows. */
const MIN_PARTIAL = 4096;
/** Room kept between frames up to this size; beyond it, the pages go back to
 * the system once the frame is out, so an idle connection holds no more. */
const KEEP_PARTIAL = 16 * 1024;

/** An ArrayBuffer that grows and shrinks in place (ES2024; Node 20 has it,
 * this build's `lib` does not describe it yet). */
interface Room extends ArrayBuffer {
  resize(byteLength: number): void;
}
const Room = ArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => Room;

/**
 * Splits a byte stream into newline-delimited frames, enforcing the frame
 * ceiling while bytes arrive: a line that grows past `maxBytes` is reported
 * once and its remaining bytes are skipped up to the next newline, so an
 * oversized frame never sits in memory and the stream stays usable.
 * Blank lines are skipped.
 *
 * The bytes of a frame still incomplete are copied into room of the framer's
 * own — never kept as pieces of the chunks they came in — and that room is a
 * resizable ArrayBuffer, whose pages are given back to the system the moment
 * it shrinks, not whenever the garbage collector next runs. A sender trickling
 * a large frame and then leaving would otherwise leave its frame's memory
 * behind: thousands of small read buffers, fragmented, or one large buffer no
 * collection ever comes for on an idle instance (issue 23, item 10).
 */
export class LineFramer {
  private room: Room | undefined;
  private partial: Buffer | undefined;
  private size = 0;
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: () => void,
  ) {}

  /**
   * Read `chunk` from `from`, reporting at most `most` frames (or oversized
   * ones); returns where it stopped — `chunk.length` once all of it is read.
   * A reader that shares its time reads a little at a time.
   */
  push(chunk: Buffer, from = 0, most = Number.POSITIVE_INFINITY): number {
    let start = from;
    let told = 0;
    for (;;) {
      if (told >= most) return start;
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) {
        if (this.size + (end - start) > this.maxBytes) {
          this.drop();
          this.skipping = true;
          told++;
          this.onOversized();
        } else if (nl >= 0 && this.size === 0) {
          // The whole frame is in this chunk: read it from there.
          if (this.line(chunk.toString("utf8", start, end))) told++;
        } else if (end > start) {
          this.append(chunk, start, end);
        }
      }
      if (nl < 0) return chunk.length;
      if (this.skipping) this.skipping = false;
      else if (this.size > 0 && this.emitPartial()) told++;
      start = nl + 1;
    }
  }

  /** Let go of a frame still incomplete (the stream ended). */
  dispose(): void {
    this.drop();
  }

  private append(chunk: Buffer, start: number, end: number): void {
    const need = this.size + (end - start);
    if (this.partial === undefined || need > this.partial.length) {
      this.room ??= new Room(0, { maxByteLength: this.maxBytes });
      let room = Math.max(MIN_PARTIAL, this.room.byteLength);
      while (room < need) room *= 2;
      // Grows in place: what is already there stays.
      this.room.resize(Math.min(room, this.maxBytes));
      this.partial = Buffer.from(this.room, 0, this.room.byteLength);
    }
    chunk.copy(this.partial, this.size, start, end);
    this.size = need;
  }

  private emitPartial(): boolean {
    const line = this.partial!.toString("utf8", 0, this.size);
    this.size = 0;
    if (this.partial!.length > KEEP_PARTIAL) this.drop();
    return this.line(line);
  }

  private drop(): void {
    this.size = 0;
    this.partial = undefined;
    this.room?.resize(0);
  }

  /** Hand on a line unless it is blank; whether it was handed on. */
  private line(line: string): boolean {
    if (line.trim() === "") return false;
    this.onLine(line);
    return true;
  }
}
