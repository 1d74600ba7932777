import { realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { isAcceptedTranscriptPath } from "../contract/transcript-path.js";

/**
 * Resolve what exists of a path (following symlinks and `..`) and keep the
 * rest as written: a transcript may not exist yet when a session greets.
 */
async function resolveExisting(path: string): Promise<string> {
  const tail: string[] = [];
  let head = resolve(path);
  for (;;) {
    try {
      return join(await realpath(head), ...tail.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(path);
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** Whether a session's announced transcript path is accepted; the reason when
 * it is not (for the instance log). */
export async function checkTranscriptPath(
  path: string,
  configHome: string,
): Promise<string | undefined> {
  if (!path.startsWith("/")) return "not an absolute path";
  const [resolved, home] = await Promise.all([resolveExisting(path), resolveExisting(configHome)]);
  return isAcceptedTranscriptPath(resolved, home)
    ? undefined
    : `outside ${join(home, "projects")} (resolves to ${resolved})`;
}
