import { isAbsolute, normalize } from "node:path";
import { num, obj, str } from "./claude/statusline-input.js";
import type { TranscriptLine } from "./transcript-lines.js";

// What a session is doing, folded line by line from its transcript (harness
// §6): Claude Code JSONL or a Codex rollout. One pass, no second look at a
// line, and a state that is plain JSON — so it can be cached on disk and
// resumed from a byte offset (fold-cache.ts) or kept live beside a tail
// (the instance's StatusFold). Everything it keeps is bounded: a transcript of
// hundreds of MB folds into a few KB.
//
// This reads raw records, not typed items: it needs what items leave out
// (usage, model, raw tool input, `toolUseResult`), and it classifies nothing —
// it only pairs `tool_use` ids with their results.

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
const MAX_PENDING = 256;
const MAX_RECENT_USAGE = 64;
const MAX_FILES = 20_000;
const MAX_EXTERNAL = 256;
const MAX_FOLDERS = 64;
const MAX_BACKGROUND = 64;
const MAX_AGENTS = 256;
const MAX_INPUT_STRING = 2_000;

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

/** Fold a batch of complete lines, in file order. */
export function foldLines(fold: SessionFold, lines: readonly TranscriptLine[]): void {
  for (const line of lines) foldLine(fold, line);
}

function foldLine(
  fold: SessionFold,
  line: Pick<TranscriptLine, "text" | "record" | "oversized">,
): void {
  const record = line.record;
  if (record === undefined) {
    if (line.oversized) fold.events++;
    else if (line.text.trim() !== "") fold.parseErrors++;
    return;
  }
  fold.events++;
  const at = str(record.timestamp) ?? null;
  if (at !== null) {
    fold.firstEventAt ??= at;
    if (fold.lastEventAt === null || later(at, fold.lastEventAt)) fold.lastEventAt = at;
  }
  if (fold.harness === "codex") foldCodex(fold, record, at);
  else foldClaude(fold, record, at);
}

// --- Claude Code -----------------------------------------------------------

const FILE_WRITERS: Record<string, string> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

function foldClaude(fold: SessionFold, r: Record<string, unknown>, at: string | null): void {
  const sidechain = r.isSidechain === true && !fold.agent;
  const cwd = str(r.cwd);
  if (!sidechain) {
    if (cwd !== undefined && cwd !== fold.cwd) {
      fold.cwd = cwd;
      addFolder(fold, cwd);
    }
    fold.sessionId = str(r.sessionId) ?? fold.sessionId;
    fold.gitBranch = str(r.gitBranch) ?? fold.gitBranch;
  }
  switch (r.type) {
    case "assistant":
      claudeAssistant(fold, r, at, sidechain, cwd);
      return;
    case "user":
      claudeUser(fold, r, at, sidechain);
      return;
    case "attachment": {
      const a = obj(r.attachment);
      const snap = obj(a?.snapshot);
      if (a?.type === "environment" && snap !== undefined) {
        const dirs = snap.additionalWorkingDirectories;
        if (Array.isArray(dirs))
          for (const d of dirs) if (typeof d === "string") addFolder(fold, d);
      }
      return;
    }
  }
}

function claudeAssistant(
  fold: SessionFold,
  r: Record<string, unknown>,
  at: string | null,
  sidechain: boolean,
  cwd: string | undefined,
): void {
  const message = obj(r.message);
  if (message === undefined) return;
  const model = str(message.model);
  const content = Array.isArray(message.content) ? message.content : [];
  const apiError =
    r.isApiErrorMessage === true ||
    (model === "<synthetic>" && textOf(content).startsWith("API Error"));
  const usage = obj(message.usage);
  if (usage !== undefined && !apiError)
    countUsage(fold, str(message.id) ?? str(r.requestId), usage);
  if (!sidechain) {
    if (at !== null) fold.lastAssistantAt = at;
    if (apiError) {
      fold.apiError = {
        text: textOf(content) || "API error",
        occurredAt: at ?? fold.lastEventAt ?? "",
      };
    } else {
      fold.apiError = null;
      if (model !== undefined && model !== "<synthetic>") fold.model = model;
      if (usage !== undefined && model !== undefined && model !== "<synthetic>" && at !== null) {
        const turn: ContextTurn = {
          tokens:
            int(usage.input_tokens) +
            int(usage.cache_creation_input_tokens) +
            int(usage.cache_read_input_tokens),
          model,
          observedAt: at,
        };
        const effort = str(r.perTurnEffort);
        if (effort !== undefined) turn.effort = effort;
        fold.context = turn;
      }
    }
  }
  for (const block of content) {
    const b = obj(block);
    if (b?.type !== "tool_use") continue;
    const id = str(b.id);
    const name = str(b.name);
    if (id === undefined || name === undefined) continue;
    claudeToolUse(fold, id, name, obj(b.input) ?? {}, at, sidechain, cwd);
  }
}

function claudeToolUse(
  fold: SessionFold,
  id: string,
  name: string,
  input: Record<string, unknown>,
  at: string | null,
  sidechain: boolean,
  cwd: string | undefined,
): void {
  const shell = name === "Bash";
  startCall(fold, {
    toolUseId: id,
    name,
    startedAt: at,
    command: shell ? (str(input.command) ?? null) : null,
    input: clip(input),
    shell,
  });
  for (const key of ["file_path", "notebook_path", "path"]) {
    const p = str(input[key]);
    if (p !== undefined) external(fold, p, cwd);
  }
  if (sidechain) return;
  const started = at ?? fold.lastEventAt ?? "";
  switch (name) {
    case "TodoWrite":
      if (Array.isArray(input.todos)) {
        fold.todos = todoEntries(input.todos);
        fold.todosAt = at;
      }
      return;
    case "ScheduleWakeup": {
      const delay = num(input.delaySeconds);
      if (delay !== undefined && at !== null)
        fold.wake = {
          toolUseId: id,
          scheduledAt: at,
          delaySeconds: delay,
          reason: str(input.reason) ?? null,
        };
      return;
    }
    case "Bash":
      if (input.run_in_background === true)
        addBackground(fold, {
          toolUseId: id,
          kind: "bash",
          description: str(input.description) ?? str(input.command) ?? "background command",
          status: "running",
          startedAt: started,
        });
      return;
    case "Monitor":
      addBackground(fold, {
        toolUseId: id,
        kind: "monitor",
        description: str(input.description) ?? str(input.command) ?? "monitor",
        status: "running",
        startedAt: started,
      });
      return;
    case "Task":
    case "Agent": {
      const background = input.run_in_background === true;
      const call: AgentCall = { toolUseId: id, status: "running", startedAt: at, background };
      setIf(call, "description", str(input.description));
      setIf(call, "subagentType", str(input.subagent_type));
      setIf(call, "name", str(input.name));
      setIf(call, "teamName", str(input.team_name));
      fold.agents.push(call);
      if (fold.agents.length > MAX_AGENTS) fold.agents.shift();
      if (background) {
        const task: BackgroundTask = {
          toolUseId: id,
          kind: "agent",
          description: call.description ?? "background agent",
          status: "running",
          startedAt: started,
        };
        setIf(task, "agentType", call.subagentType);
        addBackground(fold, task);
      }
      return;
    }
  }
}

function claudeUser(
  fold: SessionFold,
  r: Record<string, unknown>,
  at: string | null,
  sidechain: boolean,
): void {
  const message = obj(r.message);
  const content = message?.content;
  const blocks = Array.isArray(content) ? content : [];
  const text = typeof content === "string" ? content : textOf(blocks);
  if (text.includes("<task-notification>")) taskNotification(fold, text, at);
  let prompt = typeof content === "string";
  const results = obj(r.toolUseResult);
  for (const block of blocks) {
    const b = obj(block);
    if (b?.type === "text") prompt = true;
    if (b?.type !== "tool_result") continue;
    const id = str(b.tool_use_id);
    if (id !== undefined) claudeToolResult(fold, id, b.is_error === true, results, at, textOf([b]));
  }
  // A new turn of the main context: whatever error stopped the last one is
  // behind it (harness-injected meta records start no turn).
  if (prompt && !sidechain && r.isMeta !== true) fold.apiError = null;
}

function claudeToolResult(
  fold: SessionFold,
  id: string,
  isError: boolean,
  result: Record<string, unknown> | undefined,
  at: string | null,
  text: string,
): void {
  const call = finishCall(fold, id, isError, at);
  if (call === undefined) return;
  const input = obj(call.input) ?? {};
  const field = FILE_WRITERS[call.name];
  if (field !== undefined && !isError) {
    const p = str(input[field]);
    if (p !== undefined) addFile(fold, p);
  }
  const task = fold.background.find((t) => t.toolUseId === id);
  if (task !== undefined) {
    if (isError) {
      task.status = "failed";
      if (at !== null) task.endedAt = at;
    } else {
      const taskId =
        str(result?.backgroundTaskId) ??
        str(result?.shellId) ??
        str(result?.taskId) ??
        str(result?.task_id) ??
        str(result?.agentId) ??
        /\bID: ([\w-]+)/.exec(text)?.[1];
      if (taskId !== undefined) task.taskId = taskId;
    }
  }
  const agent = fold.agents.find((a) => a.toolUseId === id);
  if (agent !== undefined) {
    setIf(agent, "agentId", str(result?.agentId));
    const status = str(result?.status);
    agent.status = isError
      ? "failed"
      : status === "async_launched"
        ? "running"
        : (status ?? "completed");
    if (agent.status !== "running" && at !== null) agent.endedAt = at;
  }
  if (
    !isError &&
    (call.name === "TaskStop" || call.name === "KillShell" || call.name === "KillBash")
  ) {
    const target = str(input.task_id) ?? str(input.shell_id);
    const stopped = fold.background.find((t) => t.taskId === target);
    if (stopped !== undefined && stopped.endedAt === undefined) {
      stopped.status = "killed";
      if (at !== null) stopped.endedAt = at;
    }
  }
}

/** `<task-notification>`: a background task the harness reports ended. */
function taskNotification(fold: SessionFold, text: string, at: string | null): void {
  const tag = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1]?.trim();
  const taskId = tag("task-id");
  const toolUseId = tag("tool-use-id");
  const status = tag("status");
  const task = fold.background.find(
    (t) =>
      (taskId !== undefined && t.taskId === taskId) ||
      (toolUseId !== undefined && t.toolUseId === toolUseId),
  );
  if (task !== undefined && status !== undefined) {
    task.status = status;
    if (at !== null && status !== "running") task.endedAt = at;
  }
  const agent = fold.agents.find(
    (a) =>
      (taskId !== undefined && a.agentId === taskId) ||
      (toolUseId !== undefined && a.toolUseId === toolUseId),
  );
  if (agent !== undefined && status !== undefined) {
    agent.status = status;
    if (at !== null && status !== "running") agent.endedAt = at;
  }
}

function countUsage(
  fold: SessionFold,
  id: string | undefined,
  usage: Record<string, unknown>,
): void {
  const now: [number, number, number, number] = [
    int(usage.input_tokens),
    int(usage.output_tokens),
    int(usage.cache_creation_input_tokens),
    int(usage.cache_read_input_tokens),
  ];
  let before: [number, number, number, number] = [0, 0, 0, 0];
  if (id !== undefined) {
    const seen = fold.recentUsage.find((e) => e[0] === id);
    if (seen !== undefined) {
      before = [seen[1], seen[2], seen[3], seen[4]];
      // A later record of the same message may carry grown counts: count the
      // growth, never the same tokens twice.
      for (let i = 0; i < 4; i++) now[i] = Math.max(now[i]!, before[i]!);
      seen.splice(1, 4, ...now);
    } else {
      fold.recentUsage.push([id, ...now]);
      if (fold.recentUsage.length > MAX_RECENT_USAGE) fold.recentUsage.shift();
    }
  }
  fold.usage.input += now[0] - before[0];
  fold.usage.output += now[1] - before[1];
  fold.usage.cacheCreation += now[2] - before[2];
  fold.usage.cacheRead += now[3] - before[3];
}

// --- Codex -----------------------------------------------------------------

/** Codex function calls that run a shell command. */
const CODEX_SHELLS = new Set([
  "shell",
  "exec_command",
  "local_shell",
  "container.exec",
  "shell_command",
]);

function foldCodex(fold: SessionFold, r: Record<string, unknown>, at: string | null): void {
  const p = obj(r.payload);
  if (p === undefined) return;
  switch (r.type) {
    case "session_meta": {
      fold.sessionId = str(p.id) ?? fold.sessionId;
      codexCwd(fold, str(p.cwd));
      fold.gitBranch = str(obj(p.git)?.branch) ?? fold.gitBranch;
      return;
    }
    case "turn_context": {
      codexCwd(fold, str(p.cwd));
      fold.model = str(p.model) ?? fold.model;
      fold.effort = str(p.effort) ?? fold.effort;
      return;
    }
    case "response_item":
      codexItem(fold, p, at);
      return;
    case "event_msg":
      codexEvent(fold, p, at);
      return;
  }
}

function codexCwd(fold: SessionFold, cwd: string | undefined): void {
  if (cwd === undefined || cwd === fold.cwd) return;
  fold.cwd = cwd;
  addFolder(fold, cwd);
}

function codexItem(fold: SessionFold, p: Record<string, unknown>, at: string | null): void {
  switch (p.type) {
    case "message":
      if (p.role === "assistant" && at !== null) fold.lastAssistantAt = at;
      return;
    case "reasoning":
      if (at !== null) fold.lastAssistantAt = at;
      return;
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call": {
      const id = str(p.call_id) ?? str(p.id);
      if (id === undefined) return;
      if (at !== null) fold.lastAssistantAt = at;
      const name = str(p.name) ?? (p.type === "local_shell_call" ? "local_shell" : "tool");
      const args = codexArguments(p);
      const shell = CODEX_SHELLS.has(name);
      startCall(fold, {
        toolUseId: id,
        name,
        startedAt: at,
        command: shell ? codexCommand(args) : null,
        input: clip(args),
        shell,
      });
      if (name === "update_plan" && Array.isArray(args.plan)) {
        fold.todos = todoEntries(
          args.plan.map((s) => ({ content: obj(s)?.step, status: obj(s)?.status })),
        );
        fold.todosAt = at;
      }
      return;
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const id = str(p.call_id);
      if (id === undefined) return;
      const out = typeof p.output === "string" ? p.output : JSON.stringify(p.output ?? "");
      const call = finishCall(fold, id, codexFailed(out), at);
      if (call?.name === "apply_patch" && !codexFailed(out)) {
        const patch = obj(call.input)?.input;
        if (typeof patch === "string") for (const f of patchFiles(patch)) addFile(fold, f);
      }
      return;
    }
  }
}

function codexEvent(fold: SessionFold, p: Record<string, unknown>, at: string | null): void {
  switch (p.type) {
    case "token_count": {
      const info = obj(p.info);
      const total = obj(info?.total_token_usage);
      if (total !== undefined) {
        // Codex reports running totals; input counts its cached part too.
        const cached = int(total.cached_input_tokens);
        fold.usage = {
          input: Math.max(0, int(total.input_tokens) - cached),
          output: int(total.output_tokens),
          cacheCreation: 0,
          cacheRead: cached,
        };
      }
      const last = obj(info?.last_token_usage);
      if (last !== undefined && at !== null) {
        fold.context = {
          tokens: int(last.input_tokens),
          model: fold.model ?? "unknown",
          observedAt: at,
        };
        if (fold.effort !== null) fold.context.effort = fold.effort;
      }
      return;
    }
    case "user_message":
      fold.apiError = null;
      return;
    case "agent_message":
    case "agent_reasoning":
      if (at !== null) fold.lastAssistantAt = at;
      fold.apiError = null;
      return;
    case "error": {
      const text = str(p.message);
      if (text !== undefined) fold.apiError = { text, occurredAt: at ?? fold.lastEventAt ?? "" };
      return;
    }
  }
}

function codexArguments(p: Record<string, unknown>): Record<string, unknown> {
  if (p.type === "local_shell_call") return { command: obj(p.action)?.command };
  if (p.type === "custom_tool_call") return { input: p.input };
  if (typeof p.arguments !== "string") return obj(p.arguments) ?? {};
  try {
    return obj(JSON.parse(p.arguments)) ?? { arguments: p.arguments };
  } catch {
    return { arguments: p.arguments };
  }
}

/** The command line of a Codex shell call: `["bash","-lc","x"]` is `x`. */
function codexCommand(args: Record<string, unknown>): string | null {
  const c = args.command ?? args.cmd;
  if (typeof c === "string") return c;
  if (!Array.isArray(c) || !c.every((x) => typeof x === "string")) return null;
  const words = c as string[];
  if (
    words.length === 3 &&
    /^(ba|z)?sh$/.test(words[0]!.replace(/.*\//, "")) &&
    /^-l?c$/.test(words[1]!)
  )
    return words[2]!;
  return words.join(" ");
}

/** A Codex tool output that reports failure: a non-zero exit code. */
function codexFailed(output: string): boolean {
  try {
    const code = obj(obj(JSON.parse(output))?.metadata)?.exit_code;
    return typeof code === "number" && code !== 0;
  } catch {
    return /^Exit code: [1-9]/m.test(output);
  }
}

/** Files an apply_patch body adds, updates or deletes. */
function patchFiles(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm))
    out.push(m[1]!.trim());
  return out;
}

// --- shared ----------------------------------------------------------------

function startCall(fold: SessionFold, call: PendingTool): void {
  fold.toolTotal++;
  fold.pending[call.toolUseId] = call;
  const ids = Object.keys(fold.pending);
  // A call whose result never comes (a crash) stays pending; beyond the
  // bound the oldest is forgotten.
  if (ids.length > MAX_PENDING) delete fold.pending[ids[0]!];
}

function finishCall(
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

function addBackground(fold: SessionFold, task: BackgroundTask): void {
  fold.background.push(task);
  if (fold.background.length > MAX_BACKGROUND) {
    // Forget a finished task first; a running one only when all are running.
    const i = fold.background.findIndex((t) => t.endedAt !== undefined);
    fold.background.splice(Math.max(i, 0), 1);
  }
}

function addFile(fold: SessionFold, path: string): void {
  const h = hash32(path);
  if (fold.filesModified.length < MAX_FILES && !fold.filesModified.includes(h))
    fold.filesModified.push(h);
}

function addFolder(fold: SessionFold, path: string): void {
  if (!isAbsolute(path)) return;
  const p = trimSeparator(normalize(path));
  if (!fold.workspaceFolders.includes(p) && fold.workspaceFolders.length < MAX_FOLDERS)
    fold.workspaceFolders.push(p);
}

function external(fold: SessionFold, path: string, cwd: string | undefined): void {
  if (!isAbsolute(path) || cwd === undefined || !isAbsolute(cwd)) return;
  const p = trimSeparator(normalize(path));
  const root = trimSeparator(normalize(cwd));
  if (p === root || p.startsWith(`${root}/`)) return;
  if (!fold.externalFiles.includes(p) && fold.externalFiles.length < MAX_EXTERNAL)
    fold.externalFiles.push(p);
}

function trimSeparator(p: string): string {
  return p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
}

function todoEntries(list: unknown[]): TodoEntry[] {
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
function textOf(content: unknown[]): string {
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
function clip(value: unknown, depth = 0): unknown {
  if (typeof value === "string")
    return value.length > MAX_INPUT_STRING ? `${value.slice(0, MAX_INPUT_STRING)}…` : value;
  if (typeof value !== "object" || value === null) return value;
  if (depth >= 4) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => clip(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 50)) out[k] = clip(v, depth + 1);
  return out;
}

function setIf<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

function int(v: unknown): number {
  const n = num(v);
  return n === undefined || n < 0 ? 0 : Math.floor(n);
}

/** Whether ISO time `a` is after `b` (unparseable times compare as text). */
function later(a: string, b: string): boolean {
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isNaN(x) || Number.isNaN(y) ? a > b : x > y;
}

/** FNV-1a, 32 bits. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
