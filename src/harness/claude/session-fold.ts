import {
  type AgentCall,
  addBackground,
  addFile,
  addFolder,
  type BackgroundTask,
  type ContextTurn,
  clip,
  external,
  finishCall,
  int,
  MAX_AGENTS,
  MAX_RECENT_USAGE,
  type SessionFold,
  setIf,
  startCall,
  textOf,
  todoEntries,
} from "../fold-state.js";
import { claudeCall, claudeResult, spawnsAgent } from "../tool-pairs.js";
import { num, obj, str } from "./statusline-input.js";

// The session fold of a Claude Code transcript (harness §6.2): one record at a
// time, into the shared state of ../fold-state.ts.

const FILE_WRITERS: Record<string, string> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

export function foldClaude(fold: SessionFold, r: Record<string, unknown>, at: string | null): void {
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
    const call = claudeCall(block);
    if (call?.name !== undefined)
      claudeToolUse(fold, call.toolUseId, call.name, call.input, at, sidechain, cwd);
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
  }
  if (spawnsAgent(name)) agentCall(fold, id, input, at, started);
}

/** The parent side of a sub-agent: an `Agent` (or `Task`) call. */
function agentCall(
  fold: SessionFold,
  id: string,
  input: Record<string, unknown>,
  at: string | null,
  started: string,
): void {
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
    if (obj(block)?.type === "text") prompt = true;
    const result = claudeResult(block);
    if (result !== undefined)
      claudeToolResult(fold, result.toolUseId, result.failed, results, at, textOf([block]));
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
