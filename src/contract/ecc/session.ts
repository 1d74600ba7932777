import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { ECC_SHAPE } from "./board.js";

// `ecc session-inspect` (ecc-surfaces §2.4): one session and its workers as
// `ecc.session.v1`. Adapters fill what their source knows; what it cannot
// know is null (or an empty list), never guessed.

export const SESSION_SCHEMA = "ecc.session.v1";

export const SESSION_KINDS = ["orchestrated", "history", "codex-worktree", "opencode"] as const;

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));

export const SessionWorker = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    label: nullable(Type.String()),
    state: Type.String({ minLength: 1 }),
    health: Type.String({ minLength: 1 }),
    branch: nullable(Type.String()),
    worktree: nullable(Type.String()),
    runtime: Type.Object(
      {
        kind: Type.String({ minLength: 1 }),
        command: nullable(Type.String()),
        pid: nullable(Type.Integer({ minimum: 1 })),
        active: nullable(Type.Boolean()),
        dead: nullable(Type.Boolean()),
      },
      ECC_SHAPE,
    ),
    intent: Type.Object(
      { objective: nullable(Type.String()), seedPaths: Type.Array(Type.String()) },
      ECC_SHAPE,
    ),
    outputs: Type.Object(
      {
        summary: Type.Array(Type.String()),
        validation: Type.Array(Type.String()),
        remainingRisks: Type.Array(Type.String()),
      },
      ECC_SHAPE,
    ),
    /** Adapter-specific: a transcript path, a handoff file, a session file. */
    artifacts: Type.Record(Type.String(), Type.Unknown()),
  },
  ECC_SHAPE,
);
export type SessionWorker = Static<typeof SessionWorker>;

export const EccSession = Type.Object(
  {
    schemaVersion: Type.Literal(SESSION_SCHEMA),
    adapterId: Type.String({ minLength: 1 }),
    session: Type.Object(
      {
        id: Type.String({ minLength: 1 }),
        kind: Type.Union(SESSION_KINDS.map((k) => Type.Literal(k))),
        state: Type.String({ minLength: 1 }),
        repoRoot: nullable(Type.String()),
        sourceTarget: Type.Object(
          { type: Type.String({ minLength: 1 }), value: Type.String({ minLength: 1 }) },
          ECC_SHAPE,
        ),
      },
      ECC_SHAPE,
    ),
    workers: Type.Array(SessionWorker),
    aggregates: Type.Object(
      { workerCount: Type.Integer({ minimum: 0 }), states: Counts, healths: Counts },
      ECC_SHAPE,
    ),
  },
  ECC_SHAPE,
);
export type EccSession = Static<typeof EccSession>;
