import { Kind, type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { STATE_STORE_BUSY } from "../errors.js";
import { exceedsJsonDepth, tooDeep } from "../json-depth.js";
import { codePointLength, Text } from "../text.js";
import { ASSIGNEE_KINDS, LANES, PRIORITIES } from "./lanes.js";

export * from "./lanes.js";

// The work board and its control-pane API (ecc-surfaces §3.3, §4, §5). ECC's
// conventions: camelCase keys, ISO-8601 timestamps, `schemaVersion` keys.

export const LaneSchema = Type.Union(LANES.map((l) => Type.Literal(l)));
export const AssigneeKindSchema = Type.Union(ASSIGNEE_KINDS.map((k) => Type.Literal(k)));

const Iso = Type.String({ minLength: 1 });
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Marks ECC-owned shapes: their keys are ECC's camelCase, not ours. */
export const ECC_SHAPE = { ecc: true } as const;

/** The 13-field work-item model: after normalisation every key is present and
 * required strings are non-empty. */
export const WorkItem = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    source: Type.String({ minLength: 1 }),
    sourceId: nullable(Type.String()),
    title: Type.String({ minLength: 1 }),
    status: Type.String({ minLength: 1 }),
    priority: nullable(Type.String()),
    url: nullable(Type.String()),
    owner: nullable(Type.String()),
    repoRoot: nullable(Type.String()),
    sessionId: nullable(Type.String()),
    metadata: Type.Unknown(),
    createdAt: Iso,
    updatedAt: Iso,
  },
  ECC_SHAPE,
);
export type WorkItem = Static<typeof WorkItem>;

/** The `work_items` topic (this implementation's extension): element
 * granularity keyed by `id`; a removed item is `{ id, deleted: true }`. */
export const WorkItemsData = Type.Object({
  items: Type.Array(
    Type.Union([
      WorkItem,
      Type.Object({ id: Type.String({ minLength: 1 }), deleted: Type.Literal(true) }, ECC_SHAPE),
    ]),
  ),
});

/** What a create/upsert accepts: only `title` is needed for a new item; the
 * rest merge into an existing one (absent = unchanged). */
export const WorkItemInput = Type.Object({
  id: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
  source: Type.Optional(Text({ minLength: 1, maxLength: 100 })),
  sourceId: Type.Optional(nullable(Text({ maxLength: 200 }))),
  title: Type.Optional(Text({ minLength: 1, maxLength: 1000 })),
  status: Type.Optional(Text({ minLength: 1, maxLength: 100 })),
  priority: Type.Optional(nullable(Type.Union(PRIORITIES.map((p) => Type.Literal(p))))),
  url: Type.Optional(nullable(Text({ maxLength: 2000 }))),
  owner: Type.Optional(nullable(Text({ maxLength: 200 }))),
  repoRoot: Type.Optional(nullable(Text({ maxLength: 4096 }))),
  sessionId: Type.Optional(nullable(Text({ maxLength: 200 }))),
  /** Any JSON, nested at most MAX_JSON_DEPTH levels. */
  metadata: Type.Optional(Type.Unknown()),
});
export type WorkItemInput = Static<typeof WorkItemInput>;

/**
 * Why a request body does not fit one of the board's request schemas, in
 * words a person reads ("title must be text of 1 to 1000 characters", "as
 * must be 'agent' or 'human'") — never a schema path, kind or pattern. Read
 * from the schema itself, so the words and the rule cannot drift apart. Knows
 * the shapes these schemas use: text (nullable or not), a choice of literals,
 * and free-form JSON, which only its depth limits. Empty = nothing to say
 * (callers still run the schema check after it).
 */
export function boardRequestErrors(schema: TObject, body: unknown): string[] {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return ["the request body must be a JSON object"];
  const out: string[] = [];
  for (const [key, field] of Object.entries(schema.properties)) {
    const value = (body as Record<string, unknown>)[key];
    if (value === undefined) {
      if (schema.required?.includes(key)) out.push(`${key} is required`);
      continue;
    }
    const problem = fieldProblem(key, field, value);
    if (problem !== undefined) out.push(problem);
  }
  return out;
}

function fieldProblem(key: string, field: TSchema, value: unknown): string | undefined {
  // A nullable choice is a union of a union and null: flatten it.
  const flat = (t: TSchema): TSchema[] => (t.anyOf ? (t.anyOf as TSchema[]).flatMap(flat) : [t]);
  const members = flat(field);
  const nullable = members.some((m) => m.type === "null");
  const kinds = members.filter((m) => m.type !== "null");
  const orNull = nullable ? " (or null)" : "";
  if (value === null) return nullable ? undefined : `${key} must not be null`;
  if (kinds.length > 0 && kinds.every((m) => m.const !== undefined)) {
    if (kinds.some((m) => m.const === value)) return undefined;
    const names = kinds.map((m) => `'${String(m.const)}'`);
    return `${key} must be ${names.slice(0, -1).join(", ")}${names.length > 1 ? " or " : ""}${names.at(-1)}${orNull}`;
  }
  const text = kinds.find((m) => m[Kind] === "CodePointString");
  if (text !== undefined) {
    const min = (text.minLength as number | undefined) ?? 0;
    const max = text.maxLength as number | undefined;
    const n = typeof value === "string" ? codePointLength(value) : -1;
    if (n >= min && (max === undefined || n <= max)) return undefined;
    const range =
      max === undefined ? `at least ${min}` : min > 0 ? `${min} to ${max}` : `at most ${max}`;
    return `${key} must be text of ${range} characters${orNull}`;
  }
  if (kinds.some((m) => m[Kind] === "Unknown") && exceedsJsonDepth(value)) return tooDeep(key);
  return undefined;
}

// --- control-pane HTTP API (§5.2) ---

export const ClaimRequest = Type.Object({
  owner: Text({ minLength: 1, maxLength: 200 }),
  /** Passed on as the assignee kind. */
  as: Type.Optional(AssigneeKindSchema),
});
export type ClaimRequest = Static<typeof ClaimRequest>;

export const MoveRequest = Type.Object({ lane: LaneSchema });
export type MoveRequest = Static<typeof MoveRequest>;

export const ClaimResponse = Type.Object({
  ok: Type.Literal(true),
  claimed: Type.Literal(true),
  item: WorkItem,
});
export const MoveResponse = Type.Object({
  ok: Type.Literal(true),
  moved: Type.Literal(true),
  item: WorkItem,
});
export const UpsertResponse = Type.Object({ ok: Type.Literal(true), item: WorkItem });

/** 400 (invalid), 403 (read-only), 404, 500 — and 503 with `code`. */
export const ControlPaneError = Type.Object({
  ok: Type.Literal(false),
  error: Type.String(),
  code: Type.Optional(Type.Literal(STATE_STORE_BUSY)),
});
export type ControlPaneError = Static<typeof ControlPaneError>;

export const HealthResponse = Type.Object({
  ok: Type.Literal(true),
  repoRoot: nullable(Type.String()),
  dbPath: Type.String(),
  stateDbPath: Type.String(),
  allowActions: Type.Boolean(),
});
export type HealthResponse = Static<typeof HealthResponse>;

/** A work item as the snapshot shows it: the model plus derived columns. */
export const SnapshotWorkItem = Type.Object({
  id: Type.String(),
  source: Type.String(),
  sourceId: nullable(Type.String()),
  title: Type.String(),
  status: Type.String(),
  kanbanState: LaneSchema,
  priority: nullable(Type.String()),
  url: nullable(Type.String()),
  owner: nullable(Type.String()),
  repoRoot: nullable(Type.String()),
  sessionId: nullable(Type.String()),
  branch: nullable(Type.String()),
  mergeGate: nullable(Type.String()),
  blocker: nullable(Type.String()),
  acceptance: Type.Array(Type.String()),
  metadata: Type.Unknown(),
  assigneeKind: Type.Union([AssigneeKindSchema, Type.Literal("unassigned")]),
  assignee: nullable(Type.String()),
  createdAt: Iso,
  updatedAt: Iso,
});
export type SnapshotWorkItem = Static<typeof SnapshotWorkItem>;

const LaneCounts = Type.Object({
  ready: Type.Integer({ minimum: 0 }),
  running: Type.Integer({ minimum: 0 }),
  blocked: Type.Integer({ minimum: 0 }),
  done: Type.Integer({ minimum: 0 }),
});

/** Board summary. ccmsg counts over **all** items, never over the listed
 * window (ECC counts over its 100-row window; a demanding user expects the
 * lane counters to match the board). */
export const WorkItemsSummary = Type.Object({
  totalCount: Type.Integer({ minimum: 0 }),
  openCount: Type.Integer({ minimum: 0 }),
  blockedCount: Type.Integer({ minimum: 0 }),
  doneCount: Type.Integer({ minimum: 0 }),
  kanban: LaneCounts,
  assignment: Type.Object({
    agent: Type.Integer({ minimum: 0 }),
    human: Type.Integer({ minimum: 0 }),
    unassigned: Type.Integer({ minimum: 0 }),
  }),
  needsAssignment: Type.Array(SnapshotWorkItem),
  items: Type.Array(SnapshotWorkItem),
});
export type WorkItemsSummary = Static<typeof WorkItemsSummary>;

export const CONTROL_PANE_SNAPSHOT_VERSION = "ecc.control-pane.snapshot.v1";

/** One session row of the snapshot, from the instance's peers and last_live. */
export const SnapshotSession = Type.Object({
  id: Type.String(),
  state: Type.String(),
  harness: nullable(Type.String()),
  repo: nullable(Type.String()),
  worktree: nullable(Type.String()),
  branch: nullable(Type.String()),
  title: nullable(Type.String()),
  updatedAt: nullable(Iso),
});
export type SnapshotSession = Static<typeof SnapshotSession>;

export const ControlPaneSnapshot = Type.Object({
  schemaVersion: Type.Literal(CONTROL_PANE_SNAPSHOT_VERSION),
  generatedAt: Iso,
  repoRoot: nullable(Type.String()),
  dbPath: Type.String(),
  stateDbPath: Type.String(),
  database: Type.Object({ exists: Type.Boolean() }),
  stateDatabase: Type.Object({ exists: Type.Boolean() }),
  execution: Type.Object({ allowActions: Type.Boolean() }),
  summary: Type.Object({
    totalSessions: Type.Integer({ minimum: 0 }),
    runningSessions: Type.Integer({ minimum: 0 }),
    pendingSessions: Type.Integer({ minimum: 0 }),
    idleSessions: Type.Integer({ minimum: 0 }),
    failedSessions: Type.Integer({ minimum: 0 }),
    stoppedSessions: Type.Integer({ minimum: 0 }),
    completedSessions: Type.Integer({ minimum: 0 }),
    unreadMessages: Type.Integer({ minimum: 0 }),
    activeWorktrees: Type.Integer({ minimum: 0 }),
  }),
  sessions: Type.Array(SnapshotSession),
  workItems: WorkItemsSummary,
});
export type ControlPaneSnapshot = Static<typeof ControlPaneSnapshot>;
