import { open } from "node:fs/promises";

/** How far back from a transcript's end a delivered message is looked for:
 * the messages in doubt are the last ones handed over before a crash. */
const TAIL_BYTES = 8 * 1024 * 1024;

/**
 * Which of `mids` the transcript at `path` records the ccmsg envelope of
 * (contract §7.5: its `ccmsg-mid` attribute), as the harness writes it into
 * a JSONL record (quotes escaped) or as plain text. Reads the file's tail
 * once, without blocking; none when it cannot be read.
 */
export async function transcriptMentions(
  path: string,
  mids: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  let file: Awaited<ReturnType<typeof open>> | undefined;
  try {
    file = await open(path, "r");
    const { size } = await file.stat();
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    for (const mid of mids)
      if ([`ccmsg-mid=\\"${mid}\\"`, `ccmsg-mid="${mid}"`].some((n) => buffer.includes(n)))
        found.add(mid);
  } catch {
    // Unreadable: nothing is known to have arrived.
  } finally {
    await file?.close();
  }
  return found;
}
