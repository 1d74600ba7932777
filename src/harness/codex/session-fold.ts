import { obj, str } from "../claude/statusline-input.js";
import {
  addFile,
  addFolder,
  clip,
  finishCall,
  int,
  type SessionFold,
  startCall,
  todoEntries,
} from "../fold-state.js";
import { codexSide } from "../tool-pairs.js";

// The session fold of a Codex rollout (harness §7.4): one record at a time,
// into the shared state of ../fold-state.ts.

/** Codex function calls that run a shell command. */
const CODEX_SHELLS = new Set([
  "shell",
  "exec_command",
  "local_shell",
  "container.exec",
  "shell_command",
]);

export function foldCodex(fold: SessionFold, r: Record<string, unknown>, at: string | null): void {
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
  const pair = codexSide(p);
  if (pair?.toolUseId !== undefined) {
    if (pair.side === "use") codexCall(fold, p, pair.toolUseId, pair.name, at);
    else codexResult(fold, p, pair.toolUseId, at);
    return;
  }
  switch (p.type) {
    case "message":
      if (p.role === "assistant" && at !== null) fold.lastAssistantAt = at;
      return;
    case "reasoning":
      if (at !== null) fold.lastAssistantAt = at;
      return;
  }
}

function codexCall(
  fold: SessionFold,
  p: Record<string, unknown>,
  id: string,
  tool: string | undefined,
  at: string | null,
): void {
  if (at !== null) fold.lastAssistantAt = at;
  const name = tool ?? "tool";
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
}

function codexResult(
  fold: SessionFold,
  p: Record<string, unknown>,
  id: string,
  at: string | null,
): void {
  const out = typeof p.output === "string" ? p.output : JSON.stringify(p.output ?? "");
  const call = finishCall(fold, id, codexFailed(out), at);
  if (call?.name === "apply_patch" && !codexFailed(out)) {
    const patch = obj(call.input)?.input;
    if (typeof patch === "string") for (const f of patchFiles(patch)) addFile(fold, f);
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
