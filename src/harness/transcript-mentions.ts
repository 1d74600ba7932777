import { open, stat } from "node:fs/promises";

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

/** Where the transcript at `path` ends now: 0 when it is not written yet
 * (a session's first prompt creates it). */
export async function transcriptEnd(path: string | undefined): Promise<number> {
  if (path === undefined) return 0;
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/**
 * The time of the first plain user turn written at or after byte `from` of
 * the transcript at `path` whose text is `text`: how Claude Code 2.1.328
 * records a prompt typed into its box — a `user` record whose content is the
 * text itself, `origin.kind` "human" (DR-0055) — never a cross-session
 * message, a hook's feedback or a tool result. Undefined when none is there
 * (yet) or the file cannot be read.
 */
export async function typedTurnAt(
  path: string,
  text: string,
  from: number,
): Promise<number | undefined> {
  let file: Awaited<ReturnType<typeof open>> | undefined;
  try {
    file = await open(path, "r");
    const { size } = await file.stat();
    const start = Math.max(from, size - TAIL_BYTES);
    if (size <= start) return undefined;
    const buffer = Buffer.alloc(size - start);
    await file.read(buffer, 0, buffer.length, start);
    const wanted = text.trim();
    for (const line of buffer.toString("utf8").split("\n")) {
      if (!line.includes('"type":"user"')) continue;
      const at = typedTurn(line, wanted);
      if (at !== undefined) return at;
    }
  } catch {
    // Unreadable: nothing is known to have arrived.
  } finally {
    await file?.close();
  }
  return undefined;
}

function typedTurn(line: string, wanted: string): number | undefined {
  let record: {
    type?: unknown;
    origin?: { kind?: unknown };
    timestamp?: unknown;
    message?: { role?: unknown; content?: unknown };
  };
  try {
    record = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (record.type !== "user" || record.message?.role !== "user") return undefined;
  if (record.origin?.kind !== "human") return undefined;
  const content = record.message.content;
  const said =
    typeof content === "string"
      ? content
      : Array.isArray(content) && content.length === 1 && content[0]?.type === "text"
        ? String(content[0].text)
        : undefined;
  if (said?.trim() !== wanted) return undefined;
  const at = typeof record.timestamp === "string" ? Date.parse(record.timestamp) : Number.NaN;
  return Number.isFinite(at) ? at : Date.now();
}
