import { isAbsolute, normalize } from "node:path";
import { num, obj, str } from "./claude/statusline-input.js";

// The state a session fold keeps (session-fold.ts) and the steps both
// harnesses' folds share: plain JSON, every part bounded.

/** Bump when the state's shape or meaning changes: a cached fold of another
 * version is thrown away and the file folded again. */
export const SESSION_FOLD_VERSION = 1;

export type FoldHarness = "claude" | "codex";

/** A tool call with no result yet. */
export interface PendingTool {
  toolUseId: string;
  name: string;
  startedAt: string | null;
  /** The command of a shell call (Claude Code's Bash, Codex's shell tools). */
  command: string | null;
  /** The call's input, clipped (long strings cut) so the fold stays small. */
  input: unknown;
  /** A shell command: the calls a stale-call threshold applies to. */
  shell: boolean;
}

export interface LastTool {
  name: string;
  status: "success" | "error";
  finishedAt: string | null;
}

export interface TokenTotals {
  input: number;
  output: number;
  cacheCreation: number;
  cacheRead: number;
}

export interface ContextTurn {
  /** Prompt size of the turn: input + cache creation + cache read. */
  tokens: number;
  model: string;
  effort?: string;
  observedAt: string;
}

export interface ApiErrorTurn {
  text: string;
  occurredAt: string;
}

export interface TodoEntry {
  content: string;
  status: string;
  activeForm?: string;
}

/** A task the session started in the background (contract §5.4). */
export interface BackgroundTask {
  toolUseId: string;
  /** The harness's id once its result names one (shell id, task id, agent id). */
  taskId?: string;
  kind: "bash" | "monitor" | "agent";
  description: string;
  status: string;
  startedAt: string;
  endedAt?: string;
  agentType?: string;
}

/** An `Agent` (or `Task`) call: the parent side of a sub-agent. */
export interface AgentCall {
  toolUseId: string;
  agentId?: string;
  status: string;
  startedAt: string | null;
  endedAt?: string;
  description?: string;
  subagentType?: string;
  name?: string;
  teamName?: string;
  background: boolean;
}

export interface WakeCall {
  toolUseId: string;
  scheduledAt: string;
  delaySeconds: number;
  reason: string | null;
}

export interface SessionFold {
  v: number;
  harness: FoldHarness;
  /** A sub-agent's own transcript: its records are all `isSidechain`, and
   * they are its main context. */
  agent: boolean;
  /** Complete lines that held a record (oversized ones included). */
  events: number;
  /** Non-empty lines that are not a JSON object. */
  parseErrors: number;
  firstEventAt: string | null;
  lastEventAt: string | null;
  /** The main context's latest assistant output (a turn making progress). */
  lastAssistantAt: string | null;
  sessionId: string | null;
  cwd: string | null;
  gitBranch: string | null;
  model: string | null;
  toolTotal: number;
  pending: Record<string, PendingTool>;
  lastTool: LastTool | null;
  /** Distinct files written or edited, as 32-bit hashes of their paths (a
   * count is all anyone reads, and hashes keep the cache small). */
  filesModified: number[];
  /** Absolute paths tools touched outside the record's own cwd. */
  externalFiles: string[];
  /** Folders the harness says the session works in (cwd, added dirs). */
  workspaceFolders: string[];
  usage: TokenTotals;
  /** Usage already counted for the latest API messages, by message id: a
   * streamed message is written as several records carrying the same usage. */
  recentUsage: [string, number, number, number, number][];
  context: ContextTurn | null;
  apiError: ApiErrorTurn | null;
  todos: TodoEntry[] | null;
  todosAt: string | null;
  background: BackgroundTask[];
  agents: AgentCall[];
  wake: WakeCall | null;
  /** The reasoning effort the harness last stated (Codex's turn context). */
  effort: string | null;
}

/** Bounds on what the fold keeps. */
export const MAX_PENDING = 256;
export const MAX_RECENT_USAGE = 64;
export const MAX_FILES = 20_000;
export const MAX_EXTERNAL = 256;
export const MAX_FOLDERS = 64;
export const MAX_BACKGROUND = 64;
export const MAX_AGENTS = 256;
export const MAX_INPUT_STRING = 2_000;

export function newSessionFold(harness: FoldHarness, agent = false): SessionFold {
  return {
    v: SESSION_FOLD_VERSION,
    harness,
    agent,
    events: 0,
    parseErrors: 0,
    firstEventAt: null,
    lastEventAt: null,
    lastAssistantAt: null,
    sessionId: null,
    cwd: null,
    gitBranch: null,
    model: null,
    toolTotal: 0,
    pending: {},
    lastTool: null,
    filesModified: [],
    externalFiles: [],
    workspaceFolders: [],
    usage: { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 },
    recentUsage: [],
    context: null,
    apiError: null,
    todos: null,
    todosAt: null,
    background: [],
    agents: [],
    wake: null,
    effort: null,
  };
}

// --- steps both folds share ------------------------------------------------

export function startCall(fold: SessionFold, call: PendingTool): void {
  fold.toolTotal++;
  fold.pending[call.toolUseId] = call;
  const ids = Object.keys(fold.pending);
  // A call whose result never comes (a crash) stays pending; beyond the
  // bound the oldest is forgotten.
  if (ids.length > MAX_PENDING) delete fold.pending[ids[0]!];
}

export function finishCall(
  fold: SessionFold,
  id: string,
  isError: boolean,
  at: string | null,
): PendingTool | undefined {
  const call = fold.pending[id];
  if (call === undefined) return undefined;
  delete fold.pending[id];
  fold.lastTool = { name: call.name, status: isError ? "error" : "success", finishedAt: at };
  return call;
}

export function addBackground(fold: SessionFold, task: BackgroundTask): void {
  fold.background.push(task);
  if (fold.background.length > MAX_BACKGROUND) {
    // Forget a finished task first; a running one only when all are running.
    const i = fold.background.findIndex((t) => t.endedAt !== undefined);
    fold.background.splice(Math.max(i, 0), 1);
  }
}

export function addFile(fold: SessionFold, path: string): void {
  const h = hash32(path);
  if (fold.filesModified.length < MAX_FILES && !fold.filesModified.includes(h))
    fold.filesModified.push(h);
}

export function addFolder(fold: SessionFold, path: string): void {
  if (!isAbsolute(path)) return;
  const p = trimSeparator(normalize(path));
  if (!fold.workspaceFolders.includes(p) && fold.workspaceFolders.length < MAX_FOLDERS)
    fold.workspaceFolders.push(p);
}

export function external(fold: SessionFold, path: string, cwd: string | undefined): void {
  if (!isAbsolute(path) || cwd === undefined || !isAbsolute(cwd)) return;
  const p = trimSeparator(normalize(path));
  const root = trimSeparator(normalize(cwd));
  if (p === root || p.startsWith(`${root}/`)) return;
  if (!fold.externalFiles.includes(p) && fold.externalFiles.length < MAX_EXTERNAL)
    fold.externalFiles.push(p);
}

export function trimSeparator(p: string): string {
  return p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
}

export function todoEntries(list: unknown[]): TodoEntry[] {
  const out: TodoEntry[] = [];
  for (const e of list) {
    const t = obj(e);
    const content = str(t?.content);
    if (t === undefined || content === undefined) continue;
    const entry: TodoEntry = { content, status: str(t.status) ?? "pending" };
    setIf(entry, "activeForm", str(t.activeForm));
    out.push(entry);
  }
  return out;
}

/** The text blocks of a content array, joined. */
export function textOf(content: unknown[]): string {
  const parts: string[] = [];
  for (const block of content) {
    const b = obj(block);
    if (b?.type === "text" && typeof b.text === "string") parts.push(b.text);
    else if (b?.type === "tool_result") {
      if (typeof b.content === "string") parts.push(b.content);
      else if (Array.isArray(b.content)) parts.push(textOf(b.content));
    }
  }
  return parts.join("\n");
}

/** A copy of a tool input small enough to keep: strings cut, depth bounded. */
export function clip(value: unknown, depth = 0): unknown {
  if (typeof value === "string")
    return value.length > MAX_INPUT_STRING ? `${value.slice(0, MAX_INPUT_STRING)}…` : value;
  if (typeof value !== "object" || value === null) return value;
  if (depth >= 4) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => clip(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 50)) out[k] = clip(v, depth + 1);
  return out;
}

export function setIf<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

export function int(v: unknown): number {
  const n = num(v);
  return n === undefined || n < 0 ? 0 : Math.floor(n);
}

/** Whether ISO time `a` is after `b` (unparseable times compare as text). */
export function later(a: string, b: string): boolean {
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isNaN(x) || Number.isNaN(y) ? a > b : x > y;
}

/** FNV-1a, 32 bits. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
