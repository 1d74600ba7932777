import { basename } from "node:path";
import { isBusy } from "../../contract/busy.js";
import { cacheLeftMs, readSessionLlm, type SessionLlm } from "../../state/llm-session-file.js";
import { foldFile } from "../fold-cache.js";
import { containmentRefusal } from "../transcript-files.js";
import {
  readInputFields,
  recordStatuslineInput,
  type StatuslineInput,
} from "./statusline-input.js";
import { readTodos } from "./todos.js";

// `ccmsg statusline` (ecc-surfaces §2.5): one compact line from the harness's
// statusline JSON. It runs on every refresh of the status bar, so it uses
// only node built-ins and tiny modules — no contract, schema library, SQLite
// or client — and folds the transcript from its cache, reading only what was
// appended since the last refresh (DR-0028).

/** stdin is read up to this many bytes; more is treated as a failure. */
export const STDIN_LIMIT = 1024 * 1024;
/** An input that has not completed by then is abandoned silently. */
export const STDIN_DEADLINE_MS = 3000;
/** ECC's auto-compact reserve, removed before showing how full context is. */
export const AUTOCOMPACT_BUFFER_PCT = 16.5;

/** Read all of a stream (stdin) as text; undefined when it is larger than
 * `limit`, fails, or does not end within `deadlineMs`. The stream is
 * destroyed either way, so nothing keeps the process alive afterwards. (A
 * direct `fs.read` of fd 0 would be a little cheaper, but a read still
 * blocked in the thread pool holds up the process's exit.) */
export function readAll(
  stream: NodeJS.ReadableStream & { destroy?: () => void },
  limit: number,
  deadlineMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: string | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.removeAllListeners("data");
      stream.destroy?.();
      resolve(value);
    };
    const timer = setTimeout(() => finish(undefined), deadlineMs);
    stream.on("data", (chunk: Buffer | string) => {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > limit) return finish(undefined);
      chunks.push(b);
    });
    stream.on("end", () => finish(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", () => finish(undefined));
  });
}

/** Percent of context USED once the auto-compact reserve is taken out:
 * `100 − (remaining − 16.5) / 83.5 × 100`, clamped to 0–100 and rounded
 * (remaining 62 → 46). */
export function contextUsedPct(remainingPct: number): number {
  const usable = 100 - AUTOCOMPACT_BUFFER_PCT;
  const used = 100 - ((remainingPct - AUTOCOMPACT_BUFFER_PCT) / usable) * 100;
  return Math.round(Math.min(100, Math.max(0, used)));
}

/** `12s`, `5m`, `1h12m`, `2h`. */
export function formatDuration(ms: number): string {
  const secs = Math.max(0, Math.floor(ms / 1000));
  if (secs < 60) return `${secs}s`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `${mins}m`;
  const hours = Math.floor(mins / 60);
  return mins % 60 > 0 ? `${hours}h${mins % 60}m` : `${hours}h`;
}

/** SGR colour codes of the line's parts. */
const DIM = "2";
const TASK = "1;97";
const METRICS = "38;5;117";
const WARNING = "1;31";
const BUSY = "1;33";
const CACHE = "36";

/** `text` in an SGR colour, or as it is when colours are off. */
function paint(code: string, text: string, colour: boolean): string {
  return colour ? `\x1b[${code}m${text}\x1b[0m` : text;
}

/** Whether to colour, by the NO_COLOR convention: any non-empty value turns
 * colours off. */
export function colourWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NO_COLOR === undefined || env.NO_COLOR === "";
}

/** A 10-cell bar of used context with its percentage, coloured as ECC does:
 * green below 50, yellow below 65, orange below 80, red beyond. */
export function contextBar(remainingPct: number, colour = true): string {
  const used = contextUsedPct(remainingPct);
  const filled = Math.floor(used / 10);
  const bar = "█".repeat(filled) + "░".repeat(10 - filled);
  const code = used < 50 ? "32" : used < 65 ? "33" : used < 80 ? "38;5;208" : "1;31";
  return paint(code, `${bar} ${used}%`, colour);
}

/** Tool calls and files written, from the session's transcript. */
export interface TranscriptCounts {
  tools: number;
  files: number;
}

/** `950`, `12.3k`, `1.2M` tokens. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** What an LLM gateway reported of the session, and the time to read it at. */
export interface GatewayView {
  session: SessionLlm;
  now: number;
}

/** The line for one input; empty when the input carries nothing to show.
 * Metrics read like ECC's: `$1.23 47t 5f 1h12m` (cost, tool calls, files
 * modified, duration), then the lines changed. With a gateway's report the
 * line starts with a busy mark while inference runs, the cost and tokens are
 * the gateway's, and the main prompt cache counts down. */
export function renderStatusline(
  input: StatuslineInput,
  task: string | undefined,
  colour = true,
  counts?: TranscriptCounts,
  gateway?: GatewayView,
): string {
  const segments: string[] = [];
  const g = gateway?.session;
  if (g !== undefined && isBusy(g, gateway!.now)) segments.push(paint(BUSY, "●", colour));
  if (input.model !== undefined) segments.push(paint(DIM, input.model, colour));
  if (task !== undefined && task !== "") segments.push(paint(TASK, task, colour));
  const metrics: string[] = [];
  const spent = g !== undefined && g.requests > 0 ? g : undefined;
  const usd =
    spent?.usd ?? (input.costUsd !== undefined && input.costUsd >= 0 ? input.costUsd : undefined);
  if (usd !== undefined) metrics.push(`$${usd.toFixed(2)}`);
  if (spent !== undefined) {
    const t = spent.tokens;
    metrics.push(`${formatTokens(t.input + t.output + t.cache_creation + t.cache_read)}tok`);
  }
  if (counts !== undefined) metrics.push(`${counts.tools}t`, `${counts.files}f`);
  if (input.durationMs !== undefined) metrics.push(formatDuration(input.durationMs));
  if (input.linesAdded !== undefined || input.linesRemoved !== undefined)
    metrics.push(`+${input.linesAdded ?? 0}/-${input.linesRemoved ?? 0}`);
  if (metrics.length > 0) segments.push(paint(METRICS, metrics.join(" "), colour));
  const left = g === undefined ? undefined : cacheLeftMs(g, gateway!.now);
  if (left !== undefined) segments.push(paint(CACHE, `cache ${formatDuration(left)}`, colour));
  if (input.currentDir !== undefined) segments.push(paint(DIM, basename(input.currentDir), colour));
  // Without a window to draw, the harness's own "past 200k tokens" flag is
  // the only sign of a full context: say it rather than show nothing.
  const gauge =
    input.remainingPct !== undefined
      ? contextBar(input.remainingPct, colour)
      : input.exceeds200k
        ? paint(WARNING, "⚠ over 200k tokens", colour)
        : "";
  if (segments.length === 0) return gauge;
  return segments.join(` ${paint(DIM, "│", colour)} `) + (gauge === "" ? "" : ` ${gauge}`);
}

export interface StatuslinePlaces {
  /** Where inputs are recorded for the HUD (`<state dir>/statusline`). */
  recordDir: string;
  claudeHome: string;
  /** Where transcript folds are cached (`<state dir>/fold-cache`). */
  foldCacheDir?: string;
  /** Colours on (the default) or off (NO_COLOR). */
  colour?: boolean;
  /** The state dir, whose `llm-sessions/` holds what a gateway reported. */
  stateDir?: string;
  /** "Now" (tests). */
  now?: number;
}

/** Tool and file counts of the session's transcript: the path the harness
 * gave, when it lies in its config home's `projects/` (no walk looking for
 * one: this runs on every refresh); undefined without one. */
async function transcriptCounts(
  announced: string | undefined,
  places: StatuslinePlaces,
): Promise<TranscriptCounts | undefined> {
  if (announced === undefined) return undefined;
  try {
    if ((await containmentRefusal(announced, places.claudeHome, "claude")) !== undefined)
      return undefined;
    const { fold } = await foldFile(announced, "claude", places.foldCacheDir);
    return { tools: fold.toolTotal, files: fold.filesModified.length };
  } catch {
    return undefined;
  }
}

/** Render the line for a raw stdin text, recording the input on the way.
 * Throws on anything unexpected; the command turns that into silence. */
export async function statuslineFor(text: string, places: StatuslinePlaces): Promise<string> {
  const raw = JSON.parse(text) as unknown;
  const input = readInputFields(raw);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "";
  let task: string | undefined;
  let counts: TranscriptCounts | undefined;
  let gateway: GatewayView | undefined;
  if (input.sessionId !== undefined) {
    const countsRead = transcriptCounts(input.transcriptPath, places);
    // Recording is for the HUD; a full disk must not blank the status bar.
    try {
      recordStatuslineInput(places.recordDir, input.sessionId, text);
    } catch {}
    task = readTodos(places.claudeHome, input.sessionId)?.inProgress ?? undefined;
    const session =
      places.stateDir === undefined ? undefined : readSessionLlm(places.stateDir, input.sessionId);
    if (session !== undefined) gateway = { session, now: places.now ?? Date.now() };
    counts = await countsRead;
  }
  return renderStatusline(input, task, places.colour ?? true, counts, gateway);
}
