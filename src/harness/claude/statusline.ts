import { basename } from "node:path";
import {
  readInputFields,
  recordStatuslineInput,
  type StatuslineInput,
} from "./statusline-input.js";
import { readTodos } from "./todos.js";

// `ccmsg statusline` (ecc-surfaces §2.5): one compact line from the harness's
// statusline JSON. It runs on every refresh of the status bar, so it uses
// only node built-ins and tiny modules — no contract, schema library, SQLite
// or client.

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

const RESET = "\x1b[0m";
const DIM = "\x1b[2m";
const SEPARATOR = ` ${DIM}│${RESET} `;

/** A 10-cell bar of used context with its percentage, coloured as ECC does:
 * green below 50, yellow below 65, orange below 80, red beyond. */
export function contextBar(remainingPct: number): string {
  const used = contextUsedPct(remainingPct);
  const filled = Math.floor(used / 10);
  const bar = "█".repeat(filled) + "░".repeat(10 - filled);
  const colour =
    used < 50 ? "\x1b[32m" : used < 65 ? "\x1b[33m" : used < 80 ? "\x1b[38;5;208m" : "\x1b[1;31m";
  return `${colour}${bar} ${used}%${RESET}`;
}

/** The line for one input; empty when the input carries nothing to show. */
export function renderStatusline(input: StatuslineInput, task: string | undefined): string {
  const segments: string[] = [];
  if (input.model !== undefined) segments.push(`${DIM}${input.model}${RESET}`);
  if (task !== undefined && task !== "") segments.push(`\x1b[1;97m${task}${RESET}`);
  const metrics: string[] = [];
  if (input.costUsd !== undefined && input.costUsd >= 0)
    metrics.push(`$${input.costUsd.toFixed(2)}`);
  if (input.durationMs !== undefined) metrics.push(formatDuration(input.durationMs));
  if (input.linesAdded !== undefined || input.linesRemoved !== undefined)
    metrics.push(`+${input.linesAdded ?? 0}/-${input.linesRemoved ?? 0}`);
  if (metrics.length > 0) segments.push(`\x1b[38;5;117m${metrics.join(" ")}${RESET}`);
  if (input.currentDir !== undefined) segments.push(`${DIM}${basename(input.currentDir)}${RESET}`);
  const bar = input.remainingPct === undefined ? "" : contextBar(input.remainingPct);
  if (segments.length === 0) return bar;
  return segments.join(SEPARATOR) + (bar === "" ? "" : ` ${bar}`);
}

export interface StatuslinePlaces {
  /** Where inputs are recorded for the HUD (`<state dir>/statusline`). */
  recordDir: string;
  claudeHome: string;
}

/** Render the line for a raw stdin text, recording the input on the way.
 * Throws on anything unexpected; the command turns that into silence. */
export function statuslineFor(text: string, places: StatuslinePlaces): string {
  const raw = JSON.parse(text) as unknown;
  const input = readInputFields(raw);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "";
  let task: string | undefined;
  if (input.sessionId !== undefined) {
    // Recording is for the HUD; a full disk must not blank the status bar.
    try {
      recordStatuslineInput(places.recordDir, input.sessionId, text);
    } catch {}
    task = readTodos(places.claudeHome, input.sessionId)?.inProgress ?? undefined;
  }
  return renderStatusline(input, task);
}
