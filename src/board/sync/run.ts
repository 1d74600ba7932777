import type { CcmsgConfig } from "../../config/config.js";
import { isDoneStatus } from "../../contract/ecc/lanes.js";
import { ContractError, contractError } from "../../contract/errors.js";
import type { Db } from "../../store/database.js";
import { SyncRunsStore, type SyncSource } from "../../store/sync-runs.js";
import type { SyncApplied, SyncResult } from "./apply.js";
import { type BoardGithubItem, GITHUB_SYNCED_BY, readGithub } from "./github.js";
import {
  LINEAR_SYNCED_BY,
  type LinearCreateOutcome,
  type LinearSyncFacts,
  readLinear,
} from "./linear.js";

// One board sync, whoever runs it (the CLI on demand, the instance on its
// interval): resolve what to read from the request and the config, read it
// all, then hand the result to `apply` — one transaction — or, when reading
// failed, only the failure to `fail`. The board is never half-written.

export interface SyncRequest {
  source: SyncSource;
  repo?: string;
  project?: string;
  /** Linear only: an issue to create in the project before it is read. */
  create?: { title: string; description?: string };
}

export interface SyncDeps {
  config: CcmsgConfig;
  cwd: string;
  env: NodeJS.ProcessEnv;
  progress(stage: string): void;
  openOnBoard(repo: string): Promise<BoardGithubItem[]> | BoardGithubItem[];
  linearOnBoard(projectId: string): Promise<string[]> | string[];
  /** The last issue creation a Linear sync recorded (linearLastCreate). */
  linearLastCreate(): Promise<LinearCreateOutcome | null> | LinearCreateOutcome | null;
  apply(result: SyncResult): Promise<SyncApplied>;
  fail(f: {
    source: SyncSource;
    target: string | null;
    startedAt: string;
    message: string;
  }): Promise<void>;
}

export type SyncReport =
  | ({ ok: true; source: SyncSource; target: string; facts: unknown } & Omit<
      SyncApplied,
      "changed"
    >)
  | { ok: false; source: SyncSource; target: string | null; code: string; message: string };

/** The Linear project a sync reads: the request's, else the config's. */
export function linearProject(req: SyncRequest, config: CcmsgConfig): string | undefined {
  return req.project ?? config.sync?.linear?.project ?? config.linear?.project;
}

export async function runSync(req: SyncRequest, deps: SyncDeps): Promise<SyncReport> {
  const startedAt = new Date().toISOString();
  let target: string | null;
  let read: Promise<SyncResult>;
  if (req.source === "github") {
    target = req.repo ?? deps.config.sync?.github?.repo ?? null;
    read = readGithub({
      ...(target === null ? {} : { repo: target }),
      cwd: deps.cwd,
      env: deps.env,
      openOnBoard: deps.openOnBoard,
      progress: deps.progress,
    });
  } else {
    const project = linearProject(req, deps.config);
    if (project === undefined)
      throw contractError(
        "invalid_args",
        "no Linear project: give --project, or set sync.linear.project in the config",
      );
    target = project;
    const l = deps.config.sync?.linear;
    read = readLinear({
      project,
      ...(l?.endpoint === undefined ? {} : { endpoint: l.endpoint }),
      ...(l?.token_env === undefined ? {} : { tokenEnv: l.token_env }),
      env: deps.env,
      progress: deps.progress,
      openOnBoard: deps.linearOnBoard,
      ...(req.create === undefined ? {} : { create: req.create }),
      lastCreate: await deps.linearLastCreate(),
    });
  }
  let result: SyncResult;
  try {
    result = await read;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await deps.fail({ source: req.source, target, startedAt, message });
    return {
      ok: false,
      source: req.source,
      target,
      code: error instanceof ContractError ? error.code : "internal_error",
      message,
    };
  }
  deps.progress(
    `writing ${result.items.length + result.known.length + result.closures.length} items in one transaction`,
  );
  const applied = await deps.apply(result);
  const { changed: _changed, ...rest } = applied;
  return { ok: true, source: req.source, target: result.target, facts: result.facts, ...rest };
}

/** The board's open items of `repo` that a GitHub sync wrote (the
 * candidates for "missing from the lists"). An indexed read of one source. */
export function githubOpenOnBoard(db: Db, repo: string): BoardGithubItem[] {
  const rows = db
    .prepare(
      `SELECT id, status, json_extract(metadata, '$.type') AS type,
              json_extract(metadata, '$.number') AS number
       FROM work_items
       WHERE source = 'github' AND json_type(metadata) = 'object'
         AND json_extract(metadata, '$.repo') = ? AND json_extract(metadata, '$.syncedBy') = ?`,
    )
    .all(repo, GITHUB_SYNCED_BY) as {
    id: string;
    status: string;
    type: unknown;
    number: unknown;
  }[];
  return rows.flatMap((r) =>
    !isDoneStatus(r.status) &&
    (r.type === "pr" || r.type === "issue") &&
    typeof r.number === "number"
      ? [{ id: r.id, type: r.type, number: r.number }]
      : [],
  );
}

/** The issue creation the last Linear sync recorded, carried into the next
 * run (capacity is the workspace's, whichever project was synced). */
export function linearLastCreate(db: Db): LinearCreateOutcome | null {
  const facts = new SyncRunsStore(db).get("linear")?.facts as
    | Partial<LinearSyncFacts>
    | null
    | undefined;
  return facts?.lastCreate ?? null;
}

/** The board's open items a Linear sync wrote for a project. */
export function linearOpenOnBoard(db: Db, projectId: string): string[] {
  const rows = db
    .prepare(
      `SELECT id, status FROM work_items
       WHERE source = 'linear' AND json_type(metadata) = 'object'
         AND json_extract(metadata, '$.projectId') = ? AND json_extract(metadata, '$.syncedBy') = ?`,
    )
    .all(projectId, LINEAR_SYNCED_BY) as { id: string; status: string }[];
  return rows.filter((r) => !isDoneStatus(r.status)).map((r) => r.id);
}
