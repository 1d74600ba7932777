import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { ECC_SHAPE } from "./board.js";

// `ecc loop-status` (ecc-surfaces §2.3): live transcript snapshots and
// attention signals for long-running loops, and the files `--write-dir`
// leaves (one per session and an index). ECC's conventions: camelCase keys,
// ISO-8601 timestamps, a `schemaVersion` key.

export const LOOP_STATUS_SCHEMA = "ecc.loop-status.v1";
export const LOOP_STATUS_SESSION_SCHEMA = "ecc.loop-status.session.v1";
export const LOOP_STATUS_INDEX_SCHEMA = "ecc.loop-status.index.v1";

export const LOOP_SIGNAL_TYPES = [
  "schedule_wakeup_overdue",
  "pending_bash_tool_result",
  "transcript_parse_errors",
] as const;

const Iso = Type.String({ minLength: 1 });
const Count = Type.Integer({ minimum: 0 });
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** One attention signal. `type` is one of LOOP_SIGNAL_TYPES today; a reader
 * shows a type it does not know rather than refusing it. */
export const LoopSignal = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    message: Type.String(),
    toolUseId: Type.Optional(Type.String()),
    ageSeconds: Type.Optional(Count),
    dueAt: Type.Optional(Iso),
    count: Type.Optional(Count),
  },
  ECC_SHAPE,
);
export type LoopSignal = Static<typeof LoopSignal>;

/** A tool use with no matching result yet. */
export const LoopPendingTool = Type.Object(
  {
    command: nullable(Type.String()),
    input: Type.Unknown(),
    name: Type.String({ minLength: 1 }),
    startedAt: nullable(Iso),
    toolUseId: Type.String({ minLength: 1 }),
    ageSeconds: nullable(Count),
  },
  ECC_SHAPE,
);
export type LoopPendingTool = Static<typeof LoopPendingTool>;

/** The latest `ScheduleWakeup` call; `dueAt` = scheduled time + delay. */
export const LoopLatestWake = Type.Object(
  {
    delaySeconds: Type.Number({ minimum: 0 }),
    dueAt: nullable(Iso),
    reason: nullable(Type.String()),
    scheduledAt: Iso,
    toolUseId: Type.String({ minLength: 1 }),
  },
  ECC_SHAPE,
);

export const LoopSession = Type.Object(
  {
    eventCount: Count,
    lastEventAt: nullable(Iso),
    latestWake: nullable(LoopLatestWake),
    parseErrors: Count,
    pendingTools: Type.Array(LoopPendingTool),
    /** The transcript's project directory (the flattened cwd). */
    projectSlug: nullable(Type.String()),
    recommendedAction: nullable(Type.String()),
    sessionId: Type.String({ minLength: 1 }),
    signals: Type.Array(LoopSignal),
    state: Type.Union([Type.Literal("ok"), Type.Literal("attention")]),
    transcriptPath: Type.String({ minLength: 1 }),
  },
  ECC_SHAPE,
);
export type LoopSession = Static<typeof LoopSession>;

export const LoopSource = Type.Object(
  {
    bashTimeoutSeconds: Type.Number({ minimum: 0 }),
    homeDir: nullable(Type.String()),
    limit: Type.Integer({ minimum: 1 }),
    transcriptCount: Count,
    transcriptRoot: nullable(Type.String()),
    wakeGraceMultiplier: Type.Number({ minimum: 0 }),
  },
  ECC_SHAPE,
);
export type LoopSource = Static<typeof LoopSource>;

/** A transcript that could not be read. */
export const LoopError = Type.Object(
  { transcriptPath: nullable(Type.String()), message: Type.String() },
  ECC_SHAPE,
);
export type LoopError = Static<typeof LoopError>;

export const LoopStatus = Type.Object(
  {
    schemaVersion: Type.Literal(LOOP_STATUS_SCHEMA),
    generatedAt: Iso,
    errors: Type.Array(LoopError),
    sessions: Type.Array(LoopSession),
    source: LoopSource,
  },
  ECC_SHAPE,
);
export type LoopStatus = Static<typeof LoopStatus>;

/** `<write dir>/<sanitised session id>.json`. */
export const LoopStatusSessionFile = Type.Object(
  {
    schemaVersion: Type.Literal(LOOP_STATUS_SESSION_SCHEMA),
    generatedAt: Iso,
    session: LoopSession,
  },
  ECC_SHAPE,
);
export type LoopStatusSessionFile = Static<typeof LoopStatusSessionFile>;

/** `<write dir>/index.json`. */
export const LoopStatusIndex = Type.Object(
  {
    schemaVersion: Type.Literal(LOOP_STATUS_INDEX_SCHEMA),
    errors: Type.Array(LoopError),
    generatedAt: Iso,
    sessionCount: Count,
    sessions: Type.Array(
      Type.Object(
        {
          lastEventAt: nullable(Iso),
          sessionId: Type.String({ minLength: 1 }),
          signalTypes: Type.Array(Type.String()),
          snapshotPath: Type.String({ minLength: 1 }),
          state: Type.Union([Type.Literal("ok"), Type.Literal("attention")]),
          transcriptPath: Type.String({ minLength: 1 }),
        },
        ECC_SHAPE,
      ),
    ),
    source: LoopSource,
  },
  ECC_SHAPE,
);
export type LoopStatusIndex = Static<typeof LoopStatusIndex>;
