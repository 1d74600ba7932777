import { readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join } from "node:path";

// `sync.handoff` (ecc-surfaces §1.6): the durable Markdown handoff of the
// worktree and whether it was written after the latest batch — the commit
// the worktree has checked out. The file says which commit it hands over
// (`**Commit:** <sha>` or `Batch: <sha>`, the last such line), so "written"
// is read from the handoff itself, never guessed from its mtime (DR-0066).

/** Where a handoff is looked for without configuration: the spec's own
 * example names `~/handoffs/widgets-board.md` for the worktree
 * `…/widgets-board`. */
export const HANDOFF_DIR = "~/handoffs";
/** The largest handoff read for its marker. */
const MAX_HANDOFF_BYTES = 1024 * 1024;

/** `**Commit:** abc1234`, `Commit: abc1234`, `- Batch: \`abc1234\``. */
const MARKER =
  /^\s*(?:[-*]\s+)?(?:\*\*)?(?:commit|batch)(?::\*\*|\*\*:|:)\s*`?([0-9a-f]{7,64})`?\s*$/gim;

export interface Handoff {
  /** As the payload shows it (may start with `~`). */
  path: string;
  /** True when it names the commit checked out, false when it names another
   * or is missing, null when it names none or HEAD is unknown. */
  written: boolean | null;
}

/** The configured handoff, else the conventional one of the worktree when
 * that file exists; undefined when there is neither. */
export async function readHandoff(
  configured: string | undefined,
  worktree: string | null,
  head: string | null,
  env: NodeJS.ProcessEnv,
): Promise<Handoff | undefined> {
  const path =
    configured ?? (worktree === null ? undefined : `${HANDOFF_DIR}/${basename(worktree)}.md`);
  if (path === undefined) return undefined;
  const file = expandHome(path, env);
  const size = await stat(file).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );
  if (size === undefined) return configured === undefined ? undefined : { path, written: false };
  if (size > MAX_HANDOFF_BYTES) return { path, written: null };
  const text = await readFile(file, "utf8").catch(() => undefined);
  const named = text === undefined ? undefined : namedCommit(text);
  return { path, written: named === undefined || head === null ? null : sameCommit(named, head) };
}

/** The commit the handoff names last, lower-cased; undefined when none. */
export function namedCommit(text: string): string | undefined {
  let last: string | undefined;
  for (const m of text.matchAll(MARKER)) last = m[1]!.toLowerCase();
  return last;
}

/** An abbreviated id names a commit when it is a prefix of the full one. */
function sameCommit(named: string, head: string): boolean {
  return head.toLowerCase().startsWith(named) || named.startsWith(head.toLowerCase());
}

function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  return path === "~" || path.startsWith("~/") ? join(env.HOME || homedir(), path.slice(1)) : path;
}
