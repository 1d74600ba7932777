import { type FileHandle, open } from "node:fs/promises";

// Reading a harness transcript (JSONL, harness.md §6) in bounded chunks: a
// file of hundreds of MB is never held whole, each chunk is one awaited read
// (so the event loop turns between chunks), and only complete lines come out —
// a last line without its newline waits for the writer to finish it.

/** One complete line of a transcript and where it sits in the file. */
export interface TranscriptLine {
  /** The line without its newline (empty for a line left out as oversized). */
  text: string;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Bytes the line takes in the file, its newline included (≥ 1). */
  bytes: number;
  /** The parsed record: a JSON object, or undefined when the line is not one
   * (a torn or foreign line; readers count it, never throw). */
  record: Record<string, unknown> | undefined;
  /** True when the line was longer than MAX_LINE_BYTES: its text is not kept. */
  oversized?: true;
}

/** Bytes read per chunk. */
export const LINE_CHUNK_BYTES = 1 << 20;
/** A longer line is reported (offsets intact) without its text: a harness can
 * write a record holding a large image, and no reader needs it verbatim. */
export const MAX_LINE_BYTES = 16 << 20;

/** Parse one line as a JSON object; undefined for anything else. */
export function parseRecord(text: string): Record<string, unknown> | undefined {
  if (text.length === 0 || text.charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface ReadLinesOptions {
  /** Stop before this offset (default: the file's size when reading starts). */
  until?: number;
  chunkBytes?: number;
  /** Parse each line into `record` (default true). */
  parse?: boolean;
}

/**
 * The complete lines of a file from byte `from` (which must be a line start),
 * in batches of about one chunk, oldest first. Stops at the last newline
 * before `until`; what follows it is a partial line and is left for a later
 * read. An oversized line is yielded with `oversized` and no text.
 */
export async function* readLines(
  path: string,
  from = 0,
  options: ReadLinesOptions = {},
): AsyncGenerator<TranscriptLine[]> {
  const handle = await open(path, "r");
  try {
    yield* readLinesFrom(handle, from, options);
  } finally {
    await handle.close();
  }
}

/** `readLines` over an open handle (the caller closes it). */
export async function* readLinesFrom(
  handle: FileHandle,
  from: number,
  options: ReadLinesOptions = {},
): AsyncGenerator<TranscriptLine[]> {
  const until = options.until ?? (await handle.stat()).size;
  const chunkBytes = options.chunkBytes ?? LINE_CHUNK_BYTES;
  const parse = options.parse ?? true;
  const buffer = Buffer.allocUnsafe(chunkBytes);
  // Bytes of the current line carried over from earlier chunks.
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let oversized = false;
  let lineStart = from;
  let position = from;
  while (position < until) {
    const { bytesRead } = await handle.read(
      buffer,
      0,
      Math.min(chunkBytes, until - position),
      position,
    );
    if (bytesRead === 0) break;
    const batch: TranscriptLine[] = [];
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf(10, start);
      if (nl < 0 || nl >= bytesRead) break;
      const bytes = carryBytes + (nl - start) + 1;
      if (oversized || bytes - 1 > MAX_LINE_BYTES) {
        batch.push({ text: "", offset: lineStart, bytes, record: undefined, oversized: true });
      } else {
        const piece = buffer.subarray(start, nl);
        const text =
          carryBytes === 0
            ? piece.toString("utf8")
            : Buffer.concat([...carry, piece]).toString("utf8");
        batch.push({
          text,
          offset: lineStart,
          bytes,
          record: parse ? parseRecord(text) : undefined,
        });
      }
      carry = [];
      carryBytes = 0;
      oversized = false;
      lineStart += bytes;
      start = nl + 1;
    }
    if (start < bytesRead) {
      const rest = bytesRead - start;
      if (!oversized && carryBytes + rest <= MAX_LINE_BYTES) {
        // Copied: the buffer is reused by the next read.
        carry.push(Buffer.from(buffer.subarray(start, bytesRead)));
      } else {
        carry = [];
        oversized = true;
      }
      carryBytes += rest;
    }
    position += bytesRead;
    if (batch.length > 0) yield batch;
  }
}
