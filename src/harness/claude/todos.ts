import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readJsonFile } from "../../json-file.js";

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

/** The newest todo file of a session, or undefined. */
export function newestTodoFile(claudeHome: string, sessionId: string): string | undefined {
  if (sessionId === "" || /[/\\]/.test(sessionId)) return undefined;
  const dir = join(claudeHome, "todos");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let best: { path: string; mtime: number } | undefined;
  for (const name of names) {
    if (!name.startsWith(sessionId) || !name.includes("-agent-") || !name.endsWith(".json"))
      continue;
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
