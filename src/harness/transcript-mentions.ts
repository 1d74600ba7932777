import { open } from "node:fs/promises";

/** How far back from a transcript's end a delivered message is looked for:
 * the messages in doubt are the last ones handed over before a crash. */
const TAIL_BYTES = 8 * 1024 * 1024;

/**
 * Whether the transcript at `path` records the ccmsg envelope of `mid`
 * (contract §7.5: its `ccmsg-mid` attribute), as the harness writes it into
 * a JSONL record (quotes escaped) or as plain text. Reads the file's tail
 * without blocking; false when it cannot be read.
 */
export async function transcriptMentions(path: string, mid: string): Promise<boolean> {
  const needles = [`ccmsg-mid=\\"${mid}\\"`, `ccmsg-mid="${mid}"`].map((n) => Buffer.from(n));
  let file: Awaited<ReturnType<typeof open>> | undefined;
  try {
    file = await open(path, "r");
    const { size } = await file.stat();
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    return needles.some((n) => buffer.includes(n));
  } catch {
    return false;
  } finally {
    await file?.close();
  }
}
