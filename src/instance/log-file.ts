import { type FileHandle, open, rename } from "node:fs/promises";

export interface LogFileLimits {
  /** Rotate before a write would take the file past this size. */
  maxBytes: number;
  /** Rotated files kept: `<path>.1` (newest) … `<path>.<keep>`. */
  keep: number;
  /** Lines waiting in memory; beyond this, new lines are dropped (counted). */
  maxQueuedBytes: number;
  /** After a failed write or open, wait this long before trying again. */
  retryMs: number;
}

export const LOG_FILE_LIMITS: LogFileLimits = {
  maxBytes: 10 * 1024 * 1024,
  keep: 3,
  maxQueuedBytes: 1024 * 1024,
  retryMs: 1000,
};

/**
 * An append-only log file that can never stop its process: lines wait in a
 * bounded queue and are written asynchronously, in order. When a write fails
 * (ENOSPC, EIO, the file gone) the lines of that write are dropped and
 * counted, the file is reopened after `retryMs`, and the first write that
 * succeeds starts with the `notice(count)` line. Nothing here throws or loops
 * without waiting. Size-based rotation keeps the files on disk bounded.
 */
export class LogFile {
  private queue: { text: string; bytes: number }[] = [];
  private queuedBytes = 0;
  private dropped = 0;
  private file: FileHandle | undefined;
  private size = 0;
  /** A failed write left part of a line in the file: end it before the next. */
  private torn = false;
  private draining: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly notice: (dropped: number) => string,
    private readonly limits: LogFileLimits = LOG_FILE_LIMITS,
  ) {}

  /** Queue one line (newline included). Always returns at once. */
  write(line: string): boolean {
    if (this.closed) return true;
    const bytes = Buffer.byteLength(line);
    if (this.queuedBytes + bytes > this.limits.maxQueuedBytes) {
      this.dropped++;
      return true;
    }
    this.queue.push({ text: line, bytes });
    this.queuedBytes += bytes;
    this.kick();
    return true;
  }

  /** Write what is queued (one more try if writing is failing, never more
   * than `waitMs`), then close the file. */
  async close(waitMs = 500): Promise<void> {
    this.closed = true;
    if (this.retry !== undefined) {
      clearTimeout(this.retry);
      this.retry = undefined;
      this.kick();
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.draining,
      new Promise((r) => {
        timer = setTimeout(r, waitMs);
      }),
    ]);
    clearTimeout(timer);
    const file = this.file;
    this.file = undefined;
    await file?.close().catch(() => {});
  }

  private kick(): void {
    if (this.draining !== undefined || this.retry !== undefined) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 || this.dropped > 0) {
      const noticed = this.dropped;
      let lines: string[] = [];
      let chunk = Buffer.alloc(0);
      let headBytes = 0;
      let written = 0;
      try {
        if (this.file === undefined) await this.reopen();
        const notice = noticed > 0 ? this.notice(noticed) : "";
        const first = Buffer.byteLength(notice) + (this.queue[0]?.bytes ?? 0);
        if (this.size > 0 && this.size + first > this.limits.maxBytes) await this.rotate();
        // Before the lines: end a torn line, then say how many were lost.
        const head = Buffer.from(`${this.torn ? "\n" : ""}${notice}`);
        headBytes = head.length;
        lines = this.take(this.limits.maxBytes - this.size - head.length);
        chunk = Buffer.concat([head, Buffer.from(lines.join(""))]);
        while (written < chunk.length) {
          const file = this.file as FileHandle;
          const { bytesWritten } = await file.write(chunk, written, chunk.length - written);
          if (bytesWritten === 0) throw new Error("the log file took no bytes");
          written += bytesWritten;
          this.size += bytesWritten;
        }
        this.torn = false;
        this.dropped -= noticed;
      } catch {
        this.failed(chunk, headBytes, lines.length, written, noticed);
        return;
      }
    }
  }

  /** The queued lines that fit in `room` bytes (at least one). */
  private take(room: number): string[] {
    let n = 0;
    let bytes = 0;
    for (const line of this.queue) {
      if (n > 0 && bytes + line.bytes > room) break;
      bytes += line.bytes;
      n++;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, n).map((l) => l.text);
  }

  /** Account for a write that stopped after `written` bytes, and try again
   * after a pause (reopening the file: it may have been moved or replaced). */
  private failed(
    chunk: Buffer,
    headBytes: number,
    lines: number,
    written: number,
    noticed: number,
  ): void {
    // The notice reached the file only if the whole head did.
    if (headBytes > 0 && written >= headBytes) this.dropped -= noticed;
    const reached = written > headBytes ? countNewlines(chunk.subarray(headBytes, written)) : 0;
    this.dropped += lines - reached;
    if (written > 0) this.torn = chunk[written - 1] !== 0x0a;
    const file = this.file;
    this.file = undefined;
    void file?.close().catch(() => {});
    if (this.closed) return;
    this.retry = setTimeout(() => this.retryNow(), this.limits.retryMs);
    this.retry.unref();
  }

  private retryNow(): void {
    this.retry = undefined;
    this.kick();
  }

  private async reopen(): Promise<void> {
    const file = await open(this.path, "a", 0o600);
    try {
      this.size = (await file.stat()).size;
    } catch (error) {
      await file.close().catch(() => {});
      throw error;
    }
    this.file = file;
  }

  /** `<path>` becomes `<path>.1`, `.1` becomes `.2`, …; the oldest goes. If
   * the file cannot be moved, it is emptied instead: the bound holds. */
  private async rotate(): Promise<void> {
    await this.file?.close().catch(() => {});
    this.file = undefined;
    const { path } = this;
    for (let i = this.limits.keep - 1; i >= 1; i--)
      await rename(`${path}.${i}`, `${path}.${i + 1}`).catch(() => {});
    await rename(path, `${path}.1`).catch(() => {});
    await this.reopen();
    this.torn = false;
    if (this.size > 0 && this.size >= this.limits.maxBytes) {
      await (this.file as FileHandle | undefined)?.truncate(0);
      this.size = 0;
    }
  }
}

function countNewlines(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) n++;
  return n;
}
