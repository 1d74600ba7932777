import { readdirSync, statSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { readJsonFile } from "../../util/json-file.js";
import type { TodoEntry } from "../fold-state.js";

// Claude Code's todo lists (harness §6.3, unofficial): files
// `<config home>/todos/<session>*-agent-*.json` holding an array of
// `{ content, status, activeForm }`. Like ECC, the newest matching file is the
// current list. Any unreadable or unexpected file reads as "no list".

export interface TodoSummary {
  /** The `activeForm` (present-tense label) of the entry in progress. */
  inProgress: string | null;
  counts: { pending: number; inProgress: number; completed: number };
  file: string;
}

/** Whether a file name in `todos/` is one of the session's lists. */
function isTodoFileOf(name: string, sessionId: string): boolean {
  return name.startsWith(sessionId) && name.includes("-agent-") && name.endsWith(".json");
}

/** Whether an id can be used to match file names at all. */
function usableId(sessionId: string): boolean {
  return sessionId !== "" && !/[/\\]/.test(sessionId);
}

/** The newest todo file of a session, or undefined. */
export function newestTodoFile(claudeHome: string, sessionId: string): string | undefined {
  if (!usableId(sessionId)) return undefined;
  const dir = join(claudeHome, "todos");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let best: { path: string; mtime: number } | undefined;
  for (const name of names) {
    if (!isTodoFileOf(name, sessionId)) continue;
    const path = join(dir, name);
    try {
      const mtime = statSync(path).mtimeMs;
      if (best === undefined || mtime > best.mtime) best = { path, mtime };
    } catch {}
  }
  return best?.path;
}

/** The session's current todo list, summarised; undefined when it has none. */
export function readTodos(claudeHome: string, sessionId: string): TodoSummary | undefined {
  const file = newestTodoFile(claudeHome, sessionId);
  if (file === undefined) return undefined;
  const list = readJsonFile(file);
  if (!Array.isArray(list)) return undefined;
  const counts = { pending: 0, inProgress: 0, completed: 0 };
  let inProgress: string | null = null;
  for (const entry of list) {
    if (typeof entry !== "object" || entry === null) continue;
    const { status, activeForm, content } = entry as Record<string, unknown>;
    if (status === "pending") counts.pending++;
    else if (status === "completed") counts.completed++;
    else if (status === "in_progress") {
      counts.inProgress++;
      // The label of the first running entry; `content` when a build omits it.
      const label = typeof activeForm === "string" && activeForm !== "" ? activeForm : content;
      if (inProgress === null && typeof label === "string" && label !== "") inProgress = label;
    }
  }
  return { inProgress, counts, file };
}

/** The entries of the session's newest todo file and its mtime, read without
 * blocking (for the instance); undefined when it has none. */
export async function readTodoFile(
  claudeHome: string,
  sessionId: string,
): Promise<{ entries: TodoEntry[]; mtimeMs: number } | undefined> {
  if (!usableId(sessionId)) return undefined;
  const dir = join(claudeHome, "todos");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  let best: { path: string; mtimeMs: number } | undefined;
  for (const name of names) {
    if (!isTodoFileOf(name, sessionId)) continue;
    const path = join(dir, name);
    try {
      const { mtimeMs } = await stat(path);
      if (best === undefined || mtimeMs > best.mtimeMs) best = { path, mtimeMs };
    } catch {}
  }
  if (best === undefined) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(await readFile(best.path, "utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(list)) return undefined;
  const entries: TodoEntry[] = [];
  for (const e of list) {
    if (typeof e !== "object" || e === null) continue;
    const { content, status, activeForm } = e as Record<string, unknown>;
    if (typeof content !== "string") continue;
    const entry: TodoEntry = { content, status: typeof status === "string" ? status : "pending" };
    if (typeof activeForm === "string" && activeForm !== "") entry.activeForm = activeForm;
    entries.push(entry);
  }
  return { entries, mtimeMs: best.mtimeMs };
}
