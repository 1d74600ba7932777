import { type Static, Type } from "@sinclair/typebox";
import { topicFrame } from "./envelope.js";
import { InstanceId, NonEmpty, Sid, Timestamp } from "./identifiers.js";
import { topicNamePattern } from "./topics.js";

// What a session is doing, folded from its transcript (contract §5.4): the
// `session_status:<sid>` topic, and `session_errors`, which exists so a list
// view need not subscribe to every session's status to learn which are stuck.
//
// Fields marked "(open)" carry the harness's own state words. The contract
// does not list them, so they are plain strings and clients show unknown ones
// as they come.

const Count = Type.Integer({ minimum: 0 });

/** One entry of the session's task list. */
export const SessionTodo = Type.Object({
  id: Type.String(),
  subject: Type.String(),
  /** (open) */
  status: Type.String(),
  owner: Type.Optional(Type.String()),
  /** Ids of the todos this one waits for; `[]` = none. */
  blocked_by: Type.Array(Type.String()),
  /** Ids of the todos waiting for this one. */
  blocks: Type.Array(Type.String()),
});
export type SessionTodo = Static<typeof SessionTodo>;

/** One agent inside a workflow run. */
export const WorkflowAgentStatus = Type.Object({
  agent_id: Type.String(),
  label: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  agent_type: Type.Optional(Type.String()),
  /** (open) */
  state: Type.String(),
  tokens: Type.Optional(Count),
  tool_calls: Type.Optional(Count),
  /** The phase the agent belongs to, as the workflow numbers it. */
  phase_index: Type.Optional(Count),
  phase_title: Type.Optional(Type.String()),
  /** Name of the tool it called last. */
  last_tool: Type.Optional(Type.String()),
  /** The start of its result, not the whole: the full text stays in the
   * agent's transcript. */
  result_preview: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  started_at: Type.Optional(Timestamp),
  duration_ms: Type.Optional(Count),
});
export type WorkflowAgentStatus = Static<typeof WorkflowAgentStatus>;

/** Progress of one workflow phase. */
export const WorkflowPhase = Type.Object({
  title: Type.String(),
  done: Count,
  total: Count,
});
export type WorkflowPhase = Static<typeof WorkflowPhase>;

export const SessionWorkflowStatus = Type.Object({
  task_id: Type.String(),
  name: Type.String(),
  summary: Type.Optional(Type.String()),
  /** (open) */
  status: Type.String(),
  started_at: Timestamp,
  ended_at: Type.Optional(Timestamp),
  /** Absent until the run has an id; with it, an agent's transcript can be
   * read (`transcript_read.run_id`). */
  run_id: Type.Optional(Type.String()),
  phases: Type.Array(WorkflowPhase),
  agents: Type.Array(WorkflowAgentStatus),
});
export type SessionWorkflowStatus = Static<typeof SessionWorkflowStatus>;

export const BACKGROUND_KINDS = ["monitor", "bash", "agent"] as const;

/** A background task the session started and may still be waiting on. */
export const SessionBackgroundStatus = Type.Object({
  task_id: Type.String(),
  kind: Type.Union(BACKGROUND_KINDS.map((k) => Type.Literal(k))),
  description: Type.String(),
  /** (open) */
  status: Type.String(),
  started_at: Timestamp,
  ended_at: Type.Optional(Timestamp),
  agent_type: Type.Optional(Type.String()),
});
export type SessionBackgroundStatus = Static<typeof SessionBackgroundStatus>;

/** A named teammate of the session's team. */
export const SessionTeammate = Type.Object({
  /** The name it is addressed by (`transcript_read.teammate`). */
  name: Type.String(),
  spawned: Type.Boolean(),
  agent_type: Type.Optional(Type.String()),
  color: Type.Optional(Type.String()),
  spawned_at: Type.Optional(Timestamp),
  last_sent_at: Type.Optional(Timestamp),
  last_received_at: Type.Optional(Timestamp),
  /** (open) An estimate from the traffic seen, not a state the teammate
   * reported. */
  state: Type.String(),
  model: Type.Optional(Type.String()),
});
export type SessionTeammate = Static<typeof SessionTeammate>;

export const AGENT_TREE_NODE_KINDS = ["teammate", "subagent", "workflow_member"] as const;

/** One agent in the session's tree, with the agents it spawned below it.
 * Recursive because spawning nests to any depth; `spawn_depth` repeats the
 * depth so a flat view need not walk the tree to indent. */
export const AgentTreeNode = Type.Recursive(
  (This) =>
    Type.Object({
      agent_id: Type.String(),
      teammate_name: Type.Optional(Type.String()),
      agent_type: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      color: Type.Optional(Type.String()),
      model: Type.Optional(Type.String()),
      team_name: Type.Optional(Type.String()),
      spawn_depth: Count,
      kind: Type.Union(AGENT_TREE_NODE_KINDS.map((k) => Type.Literal(k))),
      /** Set on workflow members: the group they are listed under. */
      workflow_id: Type.Optional(Type.String()),
      /** (open) */
      state: Type.String(),
      last_activity_at: Type.Optional(Timestamp),
      children: Type.Array(This),
    }),
  { $id: "AgentTreeNode" },
);
export type AgentTreeNode = Static<typeof AgentTreeNode>;

/** One phase of a workflow group, with the members working on it. */
export const AgentTreeWorkflowPhase = Type.Object({
  /** 1-based, in the workflow's own order. */
  index: Type.Integer({ minimum: 1 }),
  title: Type.String(),
  done: Count,
  total: Count,
  members: Type.Array(AgentTreeNode),
});
export type AgentTreeWorkflowPhase = Static<typeof AgentTreeWorkflowPhase>;

/** A workflow's agents grouped by phase. */
export const AgentTreeWorkflowGroup = Type.Object({
  workflow_id: Type.String(),
  done: Count,
  total: Count,
  phases: Type.Array(AgentTreeWorkflowPhase),
  /** Members no phase claims; kept rather than dropped so none goes missing. */
  unassigned: Type.Array(AgentTreeNode),
  last_activity_at: Type.Optional(Timestamp),
});
export type AgentTreeWorkflowGroup = Static<typeof AgentTreeWorkflowGroup>;

export const AgentTree = Type.Object({
  teammates: Type.Array(AgentTreeNode),
  agents: Type.Array(AgentTreeNode),
  workflows: Type.Array(AgentTreeWorkflowGroup),
});
export type AgentTree = Static<typeof AgentTree>;

/** A file outside the session's root that its transcript names — exactly the
 * allowlist for file ops of kind `external`, so nothing else can be read that
 * way. */
export const ExternalFile = Type.Object({
  /** Absolute. */
  path: Type.String(),
  /** Touched by a tool call, or attached by the person. */
  origin: Type.Union([Type.Literal("tool"), Type.Literal("attachment")]),
});
export type ExternalFile = Static<typeof ExternalFile>;

/** A folder the session's editor configuration names — the allowlist keys for
 * file ops of kind `workspace`. */
export const WorkspaceFolder = Type.Object({
  name: NonEmpty,
  /** Absolute, resolved, without a trailing separator and listed once, so a
   * prefix check against it cannot be fooled by a second spelling. */
  path: NonEmpty,
});
export type WorkspaceFolder = Static<typeof WorkspaceFolder>;

/** Context size of the last main-context turn. Limits are left to the reader,
 * which knows the model better than the wire does. */
export const SessionContext = Type.Object({
  tokens: Count,
  model: Type.String(),
  effort: Type.Optional(Type.String()),
  observed_at: Timestamp,
});
export type SessionContext = Static<typeof SessionContext>;

/** A harness error the session is stopped on. */
export const SessionApiError = Type.Object({
  /** As written, possibly several lines. */
  text: Type.String(),
  occurred_at: Timestamp,
});
export type SessionApiError = Static<typeof SessionApiError>;

export const SessionStatusSnapshot = Type.Object({
  todos: Type.Array(SessionTodo),
  workflows: Type.Array(SessionWorkflowStatus),
  background: Type.Array(SessionBackgroundStatus),
  teammates: Type.Array(SessionTeammate),
  agent_tree: AgentTree,
  external_files: Type.Array(ExternalFile),
  workspace_folders: Type.Array(WorkspaceFolder),
  /** Absent until a main-context turn has been seen. */
  context: Type.Optional(SessionContext),
  /** Present only while the latest main-context turn ended on a harness
   * error; a later turn that succeeds clears it. */
  api_error: Type.Optional(SessionApiError),
});
export type SessionStatusSnapshot = Static<typeof SessionStatusSnapshot>;

/** `session_status:<sid>` (whole). The sid is repeated in the payload so a
 * frame still says whose status it is once taken out of its topic name. */
export const SessionStatusData = Type.Object({
  sid: Sid,
  ...SessionStatusSnapshot.properties,
});
export type SessionStatusData = Static<typeof SessionStatusData>;
export const SessionStatusFrame = topicFrame(topicNamePattern("session_status"), SessionStatusData);
export type SessionStatusFrame = Static<typeof SessionStatusFrame>;

/** One connected session stopped on a harness error. */
export const SessionErrorEntry = Type.Object({
  sid: Sid,
  instance: InstanceId,
  /** The error as written, possibly several lines. */
  text: Type.String(),
  occurred_at: Timestamp,
});
export type SessionErrorEntry = Static<typeof SessionErrorEntry>;

/** `session_errors` (per_instance_whole): every stuck session the frame's
 * instance holds. A session that recovers leaves the list; no entry ever
 * carries an empty error. */
export const SessionErrorsData = Type.Object({ errors: Type.Array(SessionErrorEntry) });
export type SessionErrorsData = Static<typeof SessionErrorsData>;
export const SessionErrorsFrame = topicFrame(topicNamePattern("session_errors"), SessionErrorsData);
export type SessionErrorsFrame = Static<typeof SessionErrorsFrame>;
