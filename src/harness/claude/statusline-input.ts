import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../state/atomic-write.js";
import { readJsonFile } from "../../util/json-file.js";

// The harness's statusline JSON (harness §4.2) as ccmsg reads it. Every field
// may be missing or of the wrong type in some harness build, so each reader
// below checks the shape it needs and answers `undefined` otherwise. Kept free
// of any dependency but node:fs and two small file helpers: the statusline
// command loads this on every refresh.

export type Json = Record<string, unknown>;

export function obj(v: unknown): Json | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}
export function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}
export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The fields of one statusline input that ccmsg uses. */
export interface StatuslineInput {
  sessionId?: string;
  transcriptPath?: string;
  model?: string;
  currentDir?: string;
  costUsd?: number;
  durationMs?: number;
  linesAdded?: number;
  linesRemoved?: number;
  remainingPct?: number;
  /** The harness says the session is past 200k tokens (`exceeds_200k_tokens`),
   * which it may send without any `context_window`. */
  exceeds200k?: boolean;
}

export function readInputFields(raw: unknown): StatuslineInput {
  const data = obj(raw) ?? {};
  const model = obj(data.model);
  const ws = obj(data.workspace);
  const cost = obj(data.cost);
  const ctx = obj(data.context_window);
  return {
    sessionId: str(data.session_id),
    transcriptPath: str(data.transcript_path),
    model: str(model?.display_name) ?? str(model?.id),
    currentDir: str(ws?.current_dir) ?? str(data.cwd),
    costUsd: num(cost?.total_cost_usd),
    durationMs: num(cost?.total_duration_ms),
    linesAdded: num(cost?.total_lines_added),
    linesRemoved: num(cost?.total_lines_removed),
    remainingPct: num(ctx?.remaining_percentage),
    exceeds200k: data.exceeds_200k_tokens === true ? true : undefined,
  };
}

/** A session id usable as a file name as it stands: no separators, no dot
 * runs, nothing a shell or a path would reinterpret. Anything else is not
 * recorded (never rewritten, so two ids cannot collide on one file). */
export function isSafeFileName(id: string): boolean {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(id) && !id.includes("..");
}

/** Record the latest input of a session for the HUD: temp file + rename, so
 * a reader never sees half a document. */
export function recordStatuslineInput(dir: string, sessionId: string, text: string): boolean {
  if (!isSafeFileName(sessionId)) return false;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(join(dir, `${sessionId}.json`), text);
  return true;
}

/** The last recorded input of a session, or undefined. */
export function readRecordedInput(dir: string, sessionId: string): Json | undefined {
  if (!isSafeFileName(sessionId)) return undefined;
  return obj(readJsonFile(join(dir, `${sessionId}.json`)));
}
