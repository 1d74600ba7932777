import { basename } from "node:path";
import type {
  AgentTreeNode,
  SessionBackgroundStatus,
  SessionStatusSnapshot,
  SessionTeammate,
  SessionTodo,
} from "../contract/session-status.js";
import { obj, str } from "./claude/statusline-input.js";
import type { AgentCall, SessionFold, TodoEntry } from "./fold-state.js";

// `SessionStatusSnapshot` (contract §5.4) from a session's fold and the
// harness's files beside its transcript: the todo file and the sub-agents'
// own transcripts with their `.meta.json` (harness §6.1). Pure: the callers
// read the files (the instance without blocking, the CLI as it likes).

/** One sub-agent of the session, as its files describe it. */
export interface SubagentFacts {
  agentId: string;
  /** `agent-<id>.meta.json`, when readable. */
  meta: Record<string, unknown> | undefined;
  /** The fold of its own transcript, when read. */
  fold?: SessionFold;
  /** Its transcript's mtime (Unix ms), when known. */
  mtimeMs?: number;
}

/** The session's todo file (`<home>/todos/<sid>*-agent-*.json`). */
export interface TodoFileFacts {
  entries: TodoEntry[];
  mtimeMs: number;
}

export interface StatusFacts {
  todoFile?: TodoFileFacts;
  subagents: SubagentFacts[];
}

/** An ISO time as the wire's Unix ms; undefined when it does not parse. */
export function ms(iso: string | null | undefined): number | undefined {
  if (iso === null || iso === undefined) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

export function statusSnapshot(fold: SessionFold, facts: StatusFacts): SessionStatusSnapshot {
  const tree = agentTree(fold, facts.subagents);
  const snapshot: SessionStatusSnapshot = {
    todos: todos(fold, facts.todoFile),
    workflows: [],
    background: background(fold),
    teammates: tree.teammateRows,
    agent_tree: { teammates: tree.teammates, agents: tree.agents, workflows: [] },
    external_files: fold.externalFiles.map((path) => ({ path, origin: "tool" as const })),
    workspace_folders: fold.workspaceFolders.map((path) => ({
      name: basename(path) || path,
      path,
    })),
  };
  const context = fold.context;
  const observed = ms(context?.observedAt);
  if (context !== null && observed !== undefined) {
    snapshot.context = { tokens: context.tokens, model: context.model, observed_at: observed };
    if (context.effort !== undefined) snapshot.context.effort = context.effort;
  }
  const error = fold.apiError;
  if (error !== null && error.text !== "")
    snapshot.api_error = { text: error.text, occurred_at: ms(error.occurredAt) ?? 0 };
  return snapshot;
}

/** The current list: the todo file when it is at least as new as the last
 * TodoWrite the transcript shows (the harness writes it on each call), else
 * the call's list. */
function currentTodos(fold: SessionFold, file: TodoFileFacts | undefined): TodoEntry[] {
  const callAt = ms(fold.todosAt);
  if (file !== undefined && (fold.todos === null || callAt === undefined || file.mtimeMs >= callAt))
    return file.entries;
  return fold.todos ?? [];
}

function todos(fold: SessionFold, file: TodoFileFacts | undefined): SessionTodo[] {
  // The list has no ids of its own: an entry is known by its place in it.
  return currentTodos(fold, file).map((t, i) => ({
    id: String(i + 1),
    subject: t.content,
    status: t.status,
    blocked_by: [],
    blocks: [],
  }));
}

function background(fold: SessionFold): SessionBackgroundStatus[] {
  const out: SessionBackgroundStatus[] = [];
  for (const t of fold.background) {
    const started = ms(t.startedAt);
    if (started === undefined) continue;
    const row: SessionBackgroundStatus = {
      task_id: t.taskId ?? t.toolUseId,
      kind: t.kind,
      description: t.description,
      status: t.status,
      started_at: started,
    };
    const ended = ms(t.endedAt);
    if (ended !== undefined) row.ended_at = ended;
    if (t.agentType !== undefined) row.agent_type = t.agentType;
    out.push(row);
  }
  return out;
}

/** A sub-agent's state: what its parent's call says, else its meta. */
export function agentState(
  call: AgentCall | undefined,
  meta: Record<string, unknown> | undefined,
): string {
  if (meta?.stoppedByUser === true) return "stopped";
  if (call !== undefined) return call.status;
  if (meta?.finished === true) return "completed";
  return "unknown";
}

/** The call that spawned a sub-agent: by its meta's `toolUseId`, else by the
 * agent id its result named. */
export function spawningCall(fold: SessionFold, a: SubagentFacts): AgentCall | undefined {
  const toolUseId = str(a.meta?.toolUseId);
  return fold.agents.find(
    (c) => (toolUseId !== undefined && c.toolUseId === toolUseId) || c.agentId === a.agentId,
  );
}

export function isTeammate(a: SubagentFacts): boolean {
  return a.meta?.taskKind === "in_process_teammate";
}

interface Tree {
  teammates: AgentTreeNode[];
  agents: AgentTreeNode[];
  teammateRows: SessionTeammate[];
}

/** The agent tree: each sub-agent under the agent that spawned it
 * (`parentAgentId`), teammates apart; depth counted from the session (0). */
function agentTree(fold: SessionFold, subagents: SubagentFacts[]): Tree {
  const nodes = new Map<string, AgentTreeNode>();
  const rows: SessionTeammate[] = [];
  for (const a of subagents) {
    const meta = a.meta;
    const call = spawningCall(fold, a);
    const teammate = isTeammate(a);
    const node: AgentTreeNode = {
      agent_id: a.agentId,
      spawn_depth: 0,
      kind: teammate ? "teammate" : "subagent",
      state: agentState(call, meta),
      children: [],
    };
    const name = str(meta?.name) ?? call?.name;
    if (teammate && name !== undefined) node.teammate_name = name;
    const type = str(meta?.agentType) ?? call?.subagentType;
    if (type !== undefined) node.agent_type = type;
    const description = str(meta?.description) ?? call?.description;
    if (description !== undefined) node.description = description;
    const color = str(meta?.color);
    if (color !== undefined) node.color = color;
    const model = a.fold?.model ?? str(meta?.model);
    if (model !== undefined && model !== null) node.model = model;
    const team = str(meta?.teamName) ?? call?.teamName;
    if (team !== undefined) node.team_name = team;
    const activity = ms(a.fold?.lastEventAt) ?? a.mtimeMs;
    if (activity !== undefined) node.last_activity_at = Math.floor(activity);
    nodes.set(a.agentId, node);
    if (teammate) {
      const row: SessionTeammate = { name: name ?? a.agentId, spawned: true, state: node.state };
      if (type !== undefined) row.agent_type = type;
      if (color !== undefined) row.color = color;
      const spawned = ms(call?.startedAt) ?? ms(a.fold?.firstEventAt);
      if (spawned !== undefined) row.spawned_at = spawned;
      if (node.model !== undefined) row.model = node.model;
      rows.push(row);
    }
  }
  const roots: AgentTreeNode[] = [];
  for (const a of subagents) {
    const node = nodes.get(a.agentId)!;
    const parent = nodes.get(str(obj(a.meta)?.parentAgentId) ?? "");
    if (parent !== undefined && parent !== node && !descends(parent, node))
      parent.children.push(node);
    else roots.push(node);
  }
  const depth = (n: AgentTreeNode, d: number) => {
    n.spawn_depth = d;
    for (const c of n.children) depth(c, d + 1);
  };
  for (const r of roots) depth(r, 0);
  return {
    teammates: roots.filter((n) => n.kind === "teammate"),
    agents: roots.filter((n) => n.kind !== "teammate"),
    teammateRows: rows,
  };
}

/** Whether `n` is already below `ancestor` (guards a cycle in the metas). */
function descends(n: AgentTreeNode, ancestor: AgentTreeNode): boolean {
  return ancestor.children.some((c) => c === n || descends(n, c));
}
