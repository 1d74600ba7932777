import type { FileHandle } from "node:fs/promises";
import { utf8Length } from "../../contract/frames.js";

// What `file_read` returns of a file and how it decides "binary" (contract
// §4.3.4): the head up to the read limit, decoded as UTF-8 only when it is
// faithfully text. `file_edit` asks the same question of the file on disk,
// so a file shown as binary is never overwritten as text.

/** The most of a file `file_read` returns (the reference's ~512 KiB). */
export const READ_LIMIT = 512 * 1024;

/** The first `limit` bytes of an opened file (fewer when it is shorter),
 * read in bounded steps from offset 0 whatever the file position. */
export async function readHead(fh: FileHandle, limit: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(limit);
  let got = 0;
  while (got < limit) {
    const { bytesRead } = await fh.read(buf, got, Math.min(limit - got, 64 * 1024), got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

/** Where a UTF-8 sequence cut short by the end of `buf` starts (`buf.length`
 * when none is). */
function completeUpTo(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The head as text, or undefined when it is binary: it holds a NUL byte, or
 * bytes that are not UTF-8. `cut`: the head ends at the read limit, so a
 * sequence the limit split is dropped rather than counted against it. A BOM
 * is kept, so an edit writes back what was read.
 */
export function decodeText(head: Buffer, cut: boolean): string | undefined {
  if (head.includes(0)) return undefined;
  try {
    return decoder.decode(cut ? head.subarray(0, completeUpTo(head)) : head);
  } catch {
    return undefined;
  }
}

/** `text` cut so that its JSON string takes at most `budget` bytes (control
 * characters escape to six), never inside a surrogate pair. */
export function fitText(text: string, budget: number): string {
  let t = text;
  for (;;) {
    const bytes = utf8Length(JSON.stringify(t));
    if (bytes <= budget) return t;
    let end = Math.floor(t.length * (budget / bytes) * 0.98);
    const last = t.charCodeAt(end - 1);
    if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
    t = t.slice(0, end);
  }
}
