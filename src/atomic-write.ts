import { renameSync, unlinkSync, writeFileSync } from "node:fs";

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
