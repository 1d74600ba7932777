import { renameSync, unlinkSync, writeFileSync } from "node:fs";
import { type FileHandle, open, rename, unlink, writeFile } from "node:fs/promises";

/** Write a file whole or not at all: a temp file beside it, then a rename, so
 * a reader never sees half of it. The one place this is done. A write that
 * fails (a full disk) removes its temp file. */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data, { mode });
    renameSync(tmp, path);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw error;
  }
}

/** `writeFileAtomic` without blocking, for the instance's own paths. Two
 * writes of one path at once are the caller's to serialise. */
export async function writeFileAtomicAsync(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, data, { mode });
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
}

/** A file written in pieces without blocking, that appears whole at `commit`
 * (or not at all: `abort`, or a failed write, removes the temp file). */
export interface AtomicFile {
  write(text: string): Promise<void>;
  /** Flush, rename into place; the bytes written. */
  commit(): Promise<number>;
  abort(): Promise<void>;
}

/** Pieces are gathered up to this size before a write. */
const FLUSH_BYTES = 1 << 20;

/** `writeFileAtomic` for content produced bit by bit (a dump of a large
 * transcript): the same temp-then-rename, through an async handle. */
export async function openAtomicFile(path: string, mode = 0o600): Promise<AtomicFile> {
  const tmp = `${path}.${process.pid}.tmp`;
  const handle: FileHandle = await open(tmp, "wx", mode);
  let pending: string[] = [];
  let pendingBytes = 0;
  let written = 0;
  let closed = false;
  const flush = async () => {
    if (pending.length === 0) return;
    const chunk = Buffer.from(pending.join(""));
    pending = [];
    pendingBytes = 0;
    await handle.write(chunk);
    written += chunk.length;
  };
  const abort = async () => {
    if (!closed) {
      closed = true;
      await handle.close().catch(() => {});
    }
    await unlink(tmp).catch(() => {});
  };
  return {
    async write(text) {
      pending.push(text);
      pendingBytes += text.length;
      if (pendingBytes >= FLUSH_BYTES)
        await flush().catch(async (e) => {
          await abort();
          throw e;
        });
    },
    async commit() {
      try {
        await flush();
        await handle.sync();
        closed = true;
        await handle.close();
        await rename(tmp, path);
        return written;
      } catch (error) {
        await abort();
        throw error;
      }
    },
    abort,
  };
}
