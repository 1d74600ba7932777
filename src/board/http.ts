import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  boardRequestErrors,
  ClaimRequest,
  CONTROL_PANE_SNAPSHOT_VERSION,
  type ControlPaneSnapshot,
  MoveRequest,
  type SnapshotSession,
  type WorkItem,
  WorkItemInput,
  type WorkItemsSummary,
} from "../contract/ecc/board.js";
import { ContractError, STATE_STORE_BUSY } from "../contract/errors.js";
import { exceedsJsonDepth, tooDeep } from "../contract/json-depth.js";
import { harnessOf, type LastLiveSession, lostStateOf, type PeerInfo } from "../contract/peers.js";
import { validationErrors } from "../contract/validate.js";
import type { StateStore } from "../store/state-store.js";
import { boardSummary } from "./board.js";
import { mutatePg } from "./pg-board.js";
import type { MutationRunner } from "./runner.js";
import { readStatus, withBoard } from "./status.js";
import type { TeamBoard } from "./team-board.js";

export interface ControlPaneDeps {
  /** The instance's store, read on the main thread (WAL readers never wait). */
  store: StateStore;
  readOnly: boolean;
  runner: MutationRunner;
  sessions(): { peers: PeerInfo[]; last_live: LastLiveSession[] };
  /** Goes up whenever what `sessions()` returns changed. */
  sessionsVersion(): number;
  /** Messages held for anyone, not yet expired. */
  unreadMessages(): number;
  /** A mutation changed these items: tell watchers. */
  changed(items: WorkItem[]): void;
  /** The board lives in PostgreSQL, shared with other instances (DR-0046):
   * mutations, the snapshot's and status's board come from it; the rest
   * (sessions, skill runs, …) stays in the instance's own store. */
  teamBoard?: TeamBoard;
}

/** Request bodies are small JSON documents. */
const BODY_LIMIT = 64 * 1024;
const SNAPSHOT_LIMIT_DEFAULT = 12;
const SNAPSHOT_LIMIT_MAX = 50;
/** Work items a snapshot lists: the most recently updated (ECC's window). */
const SNAPSHOT_ITEMS = 100;

/** Mutation requests whose client went away before the answer (tests read it). */
export const controlPaneMetrics = { received: 0, disconnected: 0 };

/**
 * The control-pane API (ecc-surfaces §5.2) as an encapsulated Fastify plugin:
 * `app.register(controlPanePlugin, deps)`. Its body parser, 64 KiB body
 * limit, error and not-found handlers live under `/api` only and never reach
 * sibling routes. Health and snapshot stay on the main thread and never wait
 * for the write lock; claims, moves and upserts run on the mutation runner's
 * workers.
 */
export async function controlPanePlugin(app: FastifyInstance, deps: ControlPaneDeps) {
  // The prefix gives the API its own not-found handler (Fastify allows one
  // per prefix); everything else stays with the encapsulating context.
  await app.register(
    (api, _opts, done) => {
      routes(api, deps);
      done();
    },
    { prefix: "/api" },
  );
}

function routes(app: FastifyInstance, deps: ControlPaneDeps): void {
  // ECC answers every body with `{ ok: false, error }`, malformed JSON too.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "*",
    { parseAs: "string", bodyLimit: BODY_LIMIT },
    (_req, body, done) => {
      const text = String(body);
      if (text.trim() === "") return done(null, {});
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(Object.assign(new Error("malformed JSON body"), { statusCode: 400 }));
      }
      const deep = tooDeepField(parsed);
      if (deep !== undefined)
        return done(Object.assign(new Error(tooDeep(deep)), { statusCode: 400 }));
      done(null, parsed);
    },
  );
  app.setErrorHandler(
    (error: ContractError | { statusCode?: number; message: string }, _req, reply) => {
      // STATE_STORE_BUSY: 503, retry in a second, and the code for clients;
      // a store that could not write (a full disk) says so with its code.
      if (error instanceof ContractError && error.code === STATE_STORE_BUSY)
        reply.header("retry-after", "1");
      if (
        error instanceof ContractError &&
        (error.code === STATE_STORE_BUSY || error.code === "internal_error")
      )
        return json(reply, statusOf(error), { ok: false, code: error.code, error: error.message });
      return json(reply, statusOf(error), { ok: false, error: error.message });
    },
  );
  app.setNotFoundHandler((_req, reply) => json(reply, 404, { ok: false, error: "not found" }));

  app.get("/health", async (_req, reply) =>
    json(reply, 200, {
      ok: true,
      repoRoot: null,
      dbPath: deps.store.path,
      stateDbPath: boardLocation(deps),
      allowActions: !deps.readOnly,
    }),
  );

  app.get("/snapshot", async (req, reply) => {
    const raw = Number((req.query as { limit?: string }).limit ?? SNAPSHOT_LIMIT_DEFAULT);
    const limit = Number.isFinite(raw)
      ? Math.min(SNAPSHOT_LIMIT_MAX, Math.max(1, Math.trunc(raw)))
      : SNAPSHOT_LIMIT_DEFAULT;
    const team = deps.teamBoard && {
      version: deps.teamBoard.version,
      summary: await deps.teamBoard.summary(SNAPSHOT_ITEMS),
    };
    return send(reply, 200, snapshotText(deps, limit, team));
  });

  // `ccmsg status --json`, for the web console's board: read on the main
  // thread like the snapshot (WAL readers never wait for the writer).
  app.get("/status", async (req, reply) => {
    const raw = Number((req.query as { limit?: string }).limit ?? 5);
    const limit = Number.isInteger(raw) && raw >= 1 ? Math.min(raw, SNAPSHOT_LIMIT_MAX) : 5;
    const status = readStatus(deps.store, deps.store.path, limit);
    if (deps.teamBoard === undefined) return json(reply, 200, status);
    const team = deps.teamBoard.store;
    const [counts, items] = await team.read(
      async (q) => [await q.counts(), await q.recent(limit)] as const,
    );
    return json(reply, 200, withBoard(status, counts.byStatus, items));
  });

  // Read-only refuses before the body is read and before any database work.
  const mutation = { bodyLimit: BODY_LIMIT, onRequest: refuseWhenReadOnly(deps.readOnly) };

  app.post("/work-items", mutation, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const invalid = refusal(WorkItemInput, body);
    if (invalid !== undefined) return json(reply, 400, { ok: false, error: invalid });
    // Only the model's fields travel to the worker; anything else is ignored.
    const input: Record<string, unknown> = {};
    for (const key of Object.keys(WorkItemInput.properties))
      if (body[key] !== undefined) input[key] = body[key];
    return mutate(deps, reply, "upsert", input, (item) => ({ ok: true, item }));
  });

  app.post("/work-items/:id/claim", mutation, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body.owner !== "string" || body.owner.trim() === "")
      return json(reply, 400, { ok: false, error: "claim requires an owner" });
    const invalid = refusal(ClaimRequest, body);
    if (invalid !== undefined) return json(reply, 400, { ok: false, error: invalid });
    const { id } = req.params as { id: string };
    return mutate(deps, reply, "claim", { id, owner: body.owner, as: body.as }, (r) => ({
      ok: true,
      ...(r as object),
    }));
  });

  app.post("/work-items/:id/move", mutation, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (validationErrors(MoveRequest, body).length > 0) {
      return json(reply, 400, {
        ok: false,
        error: `invalid lane: ${JSON.stringify(body.lane)} (one of ready, running, blocked, done)`,
      });
    }
    const { id } = req.params as { id: string };
    return mutate(deps, reply, "move", { id, lane: body.lane }, (r) => ({
      ok: true,
      ...(r as object),
    }));
  });
}

/**
 * The HTTP status of a failure: a ContractError carries its own (400 for a
 * refused mutation, 503 for STATE_STORE_BUSY); a ContractError without one is
 * ours, 500. Fastify's own errors keep a 4xx they carry (400 malformed JSON,
 * 413 body too large); anything else is 500.
 */
function statusOf(error: ContractError | { statusCode?: number }): number {
  if (error instanceof ContractError)
    return error.status ?? (error.code === STATE_STORE_BUSY ? 503 : 500);
  const status = error.statusCode;
  return status !== undefined && status >= 400 && status < 500 ? status : 500;
}

/**
 * The field of a body whose value nests deeper than MAX_JSON_DEPTH (the
 * body itself when it is not an object), or undefined. Checked as the body is
 * parsed, for every route and every field — used or not — so no later copy
 * (the worker hand-off) or serialisation of a body can run out of stack.
 */
function tooDeepField(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  if (Array.isArray(body)) return exceedsJsonDepth(body) ? "the request body" : undefined;
  for (const [key, value] of Object.entries(body)) if (exceedsJsonDepth(value)) return key;
  return undefined;
}

/** Before the body is read or the database touched: a read-only instance
 * refuses (403), and a body that is not JSON is refused (415) — a form or
 * `text/plain` POST is what a foreign page can send without a preflight. */
function refuseWhenReadOnly(readOnly: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (readOnly)
      return json(reply, 403, {
        ok: false,
        error: "read-only: board mutations are disabled on this instance",
      });
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json")
      return json(reply, 415, { ok: false, error: "mutations take application/json bodies" });
  };
}

/** Admission, then the worker. A failure — STATE_STORE_BUSY at admission or
 * from the worker, a refused mutation, anything else — is thrown to the
 * plugin's error handler, which answers by the error's status and code. */
async function mutate(
  deps: ControlPaneDeps,
  reply: FastifyReply,
  action: "claim" | "move" | "upsert",
  args: Record<string, unknown>,
  ok: (result: unknown) => object,
) {
  controlPaneMetrics.received++;
  const team = deps.teamBoard;
  const running =
    team === undefined
      ? deps.runner.run(deps.store.path, action, args)
      : deps.runner.runAsync(() => mutatePg(team.store, action, args));
  // A client that goes away keeps its slot until the mutation has finished.
  // Watched on this response (not the keep-alive socket, which many requests
  // share): `close` before the response finished means the client left.
  let gone = false;
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) {
      gone = true;
      controlPaneMetrics.disconnected++;
    }
  });
  try {
    const result = await running;
    const item = (result as { item?: WorkItem }).item ?? (result as WorkItem);
    if (item && typeof item === "object" && "id" in item) deps.changed([item]);
    if (gone) return reply;
    return json(reply, 200, ok(result));
  } catch (error) {
    if (gone) return reply;
    throw error;
  }
}

/** ECC's JSON responses: pretty-printed, a trailing newline, never cached. */
function json(reply: FastifyReply, status: number, body: unknown) {
  return send(reply, status, pretty(body));
}

function pretty(body: unknown): string {
  return `${JSON.stringify(body, null, 2)}\n`;
}

function send(reply: FastifyReply, status: number, text: string | Buffer) {
  return reply
    .code(status)
    .header("content-type", "application/json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(text);
}

/** Why a body is refused, in a person's words (the schema's own messages
 * only if those found nothing); undefined = valid. */
function refusal(
  schema: typeof WorkItemInput | typeof ClaimRequest,
  body: Record<string, unknown>,
): string | undefined {
  const words = boardRequestErrors(schema, body);
  const found = words.length > 0 ? words : validationErrors(schema, body);
  return found.length > 0 ? found.join("; ") : undefined;
}

/**
 * The board summary, recomputed only when the board changed. Work items are
 * written only by other connections (the mutation workers, the CLI, ECC's
 * tools), and `PRAGMA data_version` changes exactly when another connection
 * committed — so any number of dashboards polling an unchanged board cost one
 * computation, and health checks never queue behind repeated ones.
 */
const summaries = new WeakMap<StateStore, { version: number; summary: WorkItemsSummary }>();

function cachedSummary(store: StateStore): WorkItemsSummary {
  const version = dataVersion(store);
  const hit = summaries.get(store);
  if (hit !== undefined && hit.version === version) return hit.summary;
  const summary = boardSummary(store, SNAPSHOT_ITEMS);
  summaries.set(store, { version, summary });
  return summary;
}

/**
 * The snapshot as sent, reused while nothing it shows changed: the board
 * (`data_version`), the sessions (their version), the unread count and the
 * limit. Serialising it (~110 KB at 100 items, pretty-printed) was most of a
 * snapshot's cost on the main thread, so dashboards polling an unchanged
 * board kept health checks waiting (DR-0022). Only `generatedAt` is new in
 * every answer: it is written between the kept head and tail.
 */
const texts = new WeakMap<ControlPaneDeps, { key: string; head: Buffer; tail: Buffer }>();

/** A team board's summary and the board version it was read at. */
interface TeamSummary {
  version: number;
  summary: WorkItemsSummary;
}

/** Where the board lives: the instance's file, or the team database (its
 * URL without the password). */
function boardLocation(deps: ControlPaneDeps): string {
  return deps.teamBoard?.store.location ?? deps.store.path;
}

function snapshotText(deps: ControlPaneDeps, limit: number, team?: TeamSummary): Buffer {
  const unread = deps.unreadMessages();
  const board = team === undefined ? `${dataVersion(deps.store)}` : `team:${team.version}`;
  const key = `${board}/${deps.sessionsVersion()}/${unread}/${limit}`;
  const now = Buffer.from(new Date().toISOString());
  let kept = texts.get(deps);
  if (kept?.key !== key) {
    const fresh = snapshot(deps, limit, unread, team?.summary);
    const text = pretty(fresh);
    const at = text.indexOf(JSON.stringify(fresh.generatedAt)) + 1;
    kept = {
      key,
      head: Buffer.from(text.slice(0, at)),
      tail: Buffer.from(text.slice(at + fresh.generatedAt.length)),
    };
    texts.set(deps, kept);
  }
  return Buffer.concat([kept.head, now, kept.tail]);
}

const versions = new WeakMap<StateStore, { get(): unknown }>();

/** Goes up whenever another connection committed (the board is written by
 * the mutation workers, the CLI and ECC's tools, never by this one). */
function dataVersion(store: StateStore): number {
  let statement = versions.get(store);
  if (statement === undefined) {
    statement = store.db.prepare("PRAGMA data_version").pluck();
    versions.set(store, statement);
  }
  return statement.get() as number;
}

function snapshot(
  deps: ControlPaneDeps,
  limit: number,
  unread: number,
  teamSummary?: WorkItemsSummary,
): ControlPaneSnapshot {
  const { peers, last_live } = deps.sessions();
  const rows: SnapshotSession[] = [
    ...peers.map((p) => sessionRow(p.sid, p.state ?? "live", p, p.last_activity_at)),
    ...last_live.map((l) => sessionRow(l.sid, lostStateOf(l), l, l.last_seen_at)),
  ];
  const count = (state: string) => rows.filter((s) => s.state === state).length;
  // Every connected session is listed; `limit` bounds the lately lost ones
  // (newest first) and nothing else — work items are always ECC's window of
  // the 100 most recently updated. The summary counts all of them.
  const sessions = rows.slice(0, peers.length + limit);
  const worktrees = new Set(peers.map((p) => p.cwd).filter((c) => c !== ""));
  return {
    schemaVersion: CONTROL_PANE_SNAPSHOT_VERSION,
    generatedAt: new Date().toISOString(),
    repoRoot: null,
    dbPath: deps.store.path,
    stateDbPath: boardLocation(deps),
    database: { exists: true },
    stateDatabase: { exists: true },
    execution: { allowActions: !deps.readOnly },
    summary: {
      totalSessions: rows.length,
      runningSessions: count("live") + count("live_unmanaged"),
      pendingSessions: count("waiting"),
      // A session lost without `session_stopping` is not known to have
      // failed: most are sessions between one-shot commands (a CLI call
      // greets as the session and leaves). ccmsg observes no failures, so
      // they count as idle (DR-0011).
      idleSessions: count("disappeared"),
      failedSessions: 0,
      stoppedSessions: count("paused"),
      completedSessions: 0,
      unreadMessages: unread,
      activeWorktrees: worktrees.size,
    },
    sessions,
    workItems: teamSummary ?? cachedSummary(deps.store),
  };
}

function sessionRow(
  id: string,
  state: string,
  row: {
    repo: string;
    ws: string;
    cwd: string;
    branch?: string;
    title?: string;
    transcript_path?: string;
  },
  at: number | undefined,
): SnapshotSession {
  return {
    id,
    state,
    harness: harnessOf(row),
    repo: row.repo || null,
    worktree: row.cwd || null,
    branch: row.branch ?? null,
    title: row.title ?? null,
    updatedAt: at === undefined ? null : new Date(at).toISOString(),
  };
}
