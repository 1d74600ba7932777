import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { SESSION_CONTROLS, type SessionControl } from "./controls.js";

// The portable HUD status payload `ecc.hud-status.v1` (ecc-surfaces §1). Keys
// are camelCase (ECC's convention) except the snake_case `schema_version`,
// which a compatible producer keeps.

export const HUD_SCHEMA_VERSION = "ecc.hud-status.v1";

/** The three spellings of "this harness cannot expose the signal" (§1.4). A
 * consumer renders them as unavailable, never as healthy. */
export const HudMissing = Type.Union([
  Type.Null(),
  Type.Literal("unknown"),
  Type.Array(Type.Never(), { maxItems: 0 }),
]);

/** A signal that may be missing. */
function signal<T extends TSchema>(schema: T) {
  return Type.Union([schema, HudMissing]);
}
/** A section object whose every field may be missing, and which may itself be
 * missing. Own properties stay required: producers never drop a name. */
function section<P extends Record<string, TSchema>>(fields: P) {
  const props: Record<string, TSchema> = {};
  for (const [k, v] of Object.entries(fields)) props[k] = signal(v);
  return signal(Type.Object(props));
}

const Iso = Type.String({ minLength: 1 });
const Count = Type.Integer({ minimum: 0 });

export { SESSION_CONTROLS, type SessionControl };
export const SessionControlName = Type.Union(SESSION_CONTROLS.map((c) => Type.Literal(c)));

/** One unavailable control and why, e.g. "gh not installed". ECC leaves the
 * element shape open; we fix it to this object. */
export const BlockedControl = Type.Object({
  control: SessionControlName,
  reason: Type.String({ minLength: 1 }),
});
export type BlockedControl = Static<typeof BlockedControl>;

export const HUD_SECTIONS = [
  "context",
  "toolCalls",
  "activeAgents",
  "todos",
  "checks",
  "cost",
  "risk",
  "queueState",
  "sessionControls",
  "sync",
] as const;
export type HudSection = (typeof HUD_SECTIONS)[number];

export const HudContext = section({
  harness: Type.String(),
  model: Type.String(),
  repo: Type.String(),
  branch: Type.String(),
  worktree: Type.String(),
  sessionId: Type.String(),
  contextWindow: section({
    remainingPct: Type.Integer({ minimum: 0, maximum: 100 }),
    pressure: Type.String(),
  }),
});

export const HudToolCalls = section({
  total: Count,
  pending: Count,
  stale: Count,
  lastTool: section({ name: Type.String(), status: Type.String(), finishedAt: Iso }),
});

export const HudActiveAgent = Type.Object({
  id: signal(Type.String()),
  state: signal(Type.String()),
  branch: signal(Type.String()),
  worktree: signal(Type.String()),
  objective: signal(Type.String()),
  handoffPath: signal(Type.String()),
});
export const HudActiveAgents = signal(Type.Array(HudActiveAgent));

export const HudTodos = section({
  inProgress: Type.String(),
  counts: section({ pending: Count, inProgress: Count, completed: Count }),
});

export const HudChecks = section({
  local: Type.Array(Type.Object({ command: Type.String(), status: Type.String() })),
  remote: Type.Array(
    Type.Object({ name: Type.String(), status: Type.String(), url: signal(Type.String()) }),
  ),
});

/** Token counts of the session and its sub-agents, from their transcripts:
 * our addition to ECC's `cost` (objects are open; ECC readers skip it;
 * DR-0033). */
export const HudTokens = section({
  input: Count,
  output: Count,
  cacheCreation: Count,
  cacheRead: Count,
  total: Count,
});

export const HudCost = signal(
  Type.Object({
    sessionUsd: signal(Type.Number({ minimum: 0 })),
    budgetUsd: signal(Type.Number({ minimum: 0 })),
    trend: signal(Type.String()),
    tokens: Type.Optional(HudTokens),
  }),
);

/** One file reservation (DR-0041) as the HUD shows it. */
export const HudReservation = Type.Object({
  glob: Type.String({ minLength: 1 }),
  /** The holding session, or null for the person. */
  holder: Type.Union([Type.String(), Type.Null()]),
  holderName: Type.Union([Type.String(), Type.Null()]),
  exclusive: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Iso,
});

/** File reservations around the session: our addition to ECC's `risk`
 * (objects are open; ECC readers skip it; DR-0041) — the session's own, and
 * other holders' inside its worktree. */
export const HudReservations = section({
  held: Type.Array(HudReservation),
  others: Type.Array(HudReservation),
});

export const HudRisk = signal(
  Type.Object({
    status: signal(Type.String()),
    reasons: signal(Type.Array(Type.String())),
    dirtyWorktree: signal(Type.Boolean()),
    conflicts: signal(Count),
    manualReviewRequired: signal(Type.Boolean()),
    reservations: Type.Optional(HudReservations),
  }),
);

export const HudQueueState = section({
  github: section({ openPullRequests: Count, openIssues: Count, openDiscussions: Count }),
  mergeQueue: Type.Array(Type.Unknown()),
  conflictQueue: Type.Array(Type.Unknown()),
  /** ECC's two fields; ccmsg adds where the work is (sessionId, branch,
   * worktree, aheadCommits, dirty, lastSeenAt) and has no PR number for a
   * worktree nobody opened one for (null, §1.4). */
  staleSalvageQueue: Type.Array(
    Type.Object({ sourcePullRequest: signal(Type.Integer()), status: Type.String() }),
  ),
});

export const HudSessionControls = section({
  supported: Type.Array(SessionControlName),
  blocked: Type.Array(BlockedControl),
});

/** Key casing is deliberate and mixed: `Linear` and `GitHub` capitalised,
 * `handoff` lower case. */
export const HudSync = section({
  Linear: section({
    project: Type.String(),
    health: Type.String(),
    issueCapacityBlocked: Type.Boolean(),
    latestStatusUpdateId: Type.String(),
  }),
  GitHub: section({ repo: Type.String(), latestPullRequest: Type.Integer({ minimum: 1 }) }),
  handoff: section({ path: Type.String(), written: Type.Boolean() }),
});

/** The whole payload. The ten section keys are required own properties. */
export const HudStatus = Type.Object({
  schema_version: Type.Literal(HUD_SCHEMA_VERSION),
  generatedAt: Iso,
  context: HudContext,
  toolCalls: HudToolCalls,
  activeAgents: HudActiveAgents,
  todos: HudTodos,
  checks: HudChecks,
  cost: HudCost,
  risk: HudRisk,
  queueState: HudQueueState,
  sessionControls: HudSessionControls,
  sync: HudSync,
});
export type HudStatus = Static<typeof HudStatus>;

/** Rules a schema cannot state (§1.5): a control appears in at most one of the
 * two lists. Returned as `path: message` lines; empty when the payload holds. */
export function hudRuleViolations(payload: HudStatus): string[] {
  const controls = payload.sessionControls;
  if (controls === null || typeof controls !== "object" || Array.isArray(controls)) return [];
  const supported = Array.isArray(controls.supported) ? (controls.supported as string[]) : [];
  const blocked = Array.isArray(controls.blocked)
    ? (controls.blocked as { control: string }[]).map((b) => b.control)
    : [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const c of [...supported, ...blocked]) {
    if (seen.has(c)) out.push(`/sessionControls: ${c} appears more than once`);
    seen.add(c);
  }
  return out;
}
