import type { Client, Notification, Pool, PoolClient } from "pg";
import type { WorkItem } from "../../contract/ecc/board.js";
import { DONE_STATUSES, isDoneStatus, PRIORITIES, priorityRank } from "../../contract/ecc/lanes.js";
import { type ContractError, contractError, STATE_STORE_BUSY } from "../../contract/errors.js";
import type { CheckRun } from "../check-runs.js";
import { BUSY_TIMEOUT_MS } from "../database.js";
import { type StatusCounts, type WorkItemRow, workItemOf } from "../work-items.js";
import { PgKvTable } from "./kv-store.js";
import { migratePg } from "./migrations.js";
import { redactUrl } from "./url.js";

/** PostgreSQL's "lock not available" (lock_timeout) and "query canceled"
 * (statement_timeout): another transaction held the rows for the whole wait. */
const BUSY_SQLSTATES = new Set(["55P03", "57014"]);

/** The same busy failure the SQLite store raises (`STATE_STORE_BUSY`, 503). */
function pgBusy(location: string, cause: unknown): ContractError {
  return contractError(
    STATE_STORE_BUSY,
    `state store is busy: another transaction holds the rows on ${location}; retry when it finishes (see who holds them: pg_locks joined with pg_stat_activity)`,
    { cause, status: 503 },
  );
}

type Row = WorkItemRow<unknown>;

const toItem = (r: Row): WorkItem => workItemOf(r, (m) => m);

/** `priorityRank` as a SQL expression, built from the function itself. */
const RANK_SQL = `CASE lower(trim(coalesce(priority, ''))) ${PRIORITIES.map(
  (p) => `WHEN '${p}' THEN ${priorityRank(p)}`,
).join(" ")} ELSE ${priorityRank(undefined)} END`;

const COLUMNS =
  "id, source, source_id, title, status, priority, url, owner, repo_root, session_id, metadata, created_at, updated_at";

function params(i: WorkItem): unknown[] {
  return [
    ...[i.id, i.source, i.sourceId, i.title, i.status, i.priority, i.url, i.owner],
    ...[i.repoRoot, i.sessionId, JSON.stringify(i.metadata ?? null), i.createdAt, i.updatedAt],
  ];
}

/** The work-item queries over one connection (inside a transaction or not). */
export class PgWorkItems {
  constructor(private readonly c: PoolClient | Pool | Client) {}

  /** One item; `lock` takes its row lock (waits up to the lock timeout). */
  async get(id: string, lock = false): Promise<WorkItem | undefined> {
    const r = await this.c.query<Row>(
      `SELECT ${COLUMNS} FROM work_items WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
      [id],
    );
    return r.rows[0] === undefined ? undefined : toItem(r.rows[0]);
  }

  async byIds(ids: string[]): Promise<WorkItem[]> {
    const r = await this.c.query<Row>(
      `SELECT ${COLUMNS} FROM work_items WHERE id = ANY($1) ORDER BY updated_at, id`,
      [ids],
    );
    return r.rows.map(toItem);
  }

  /** Write a whole item; `createdAt` of an existing row is kept. With
   * `keepNewer`, a row already updated later is left as it is (a copy). */
  async put(item: WorkItem, keepNewer = false): Promise<WorkItem> {
    const r = await this.c.query<Row>(
      `INSERT INTO work_items (${COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13)
       ON CONFLICT (id) DO UPDATE SET source = excluded.source, source_id = excluded.source_id,
         title = excluded.title, status = excluded.status, priority = excluded.priority,
         url = excluded.url, owner = excluded.owner, repo_root = excluded.repo_root,
         session_id = excluded.session_id, metadata = excluded.metadata,
         updated_at = excluded.updated_at
       ${keepNewer ? "WHERE work_items.updated_at <= excluded.updated_at" : ""}
       RETURNING ${COLUMNS}`,
      params(item),
    );
    return r.rows[0] === undefined ? item : toItem(r.rows[0]);
  }

  async recent(limit: number): Promise<WorkItem[]> {
    const r = await this.c.query<Row>(
      `SELECT ${COLUMNS} FROM work_items ORDER BY updated_at DESC, id DESC LIMIT $1`,
      [limit],
    );
    return r.rows.map(toItem);
  }

  /**
   * The automatic claim's pick, locked: the best unassigned open item among
   * the `window` most recently updated (priority, then newest — the board's
   * ranking, in SQL), taking only a row nobody else is locking (SKIP
   * LOCKED). Concurrent claims therefore take different items instead of
   * queueing on one, and a row another claim committed meanwhile is
   * re-checked by PostgreSQL before it is returned.
   */
  async claimCandidate(window: number): Promise<WorkItem | undefined> {
    const r = await this.c.query<Row>(
      `SELECT ${COLUMNS} FROM work_items
       WHERE id IN (SELECT id FROM work_items ORDER BY updated_at DESC, id DESC LIMIT $1)
         AND (owner IS NULL OR owner = '')
         AND NOT (lower(trim(status)) = ANY($2))
       ORDER BY ${RANK_SQL}, updated_at DESC, id DESC
       LIMIT 1
       FOR UPDATE SKIP LOCKED`,
      [window, DONE_STATUSES],
    );
    return r.rows[0] === undefined ? undefined : toItem(r.rows[0]);
  }

  async counts(): Promise<StatusCounts> {
    const r = await this.c.query<{
      status: string;
      kind: "agent" | "human" | "unassigned";
      n: string;
    }>(
      `SELECT status, CASE WHEN owner IS NULL OR owner = '' THEN 'unassigned'
                           WHEN metadata->>'assigneeKind' = 'agent' THEN 'agent'
                           ELSE 'human' END AS kind, count(*) AS n
       FROM work_items GROUP BY status, kind`,
    );
    const byStatus = new Map<string, number>();
    const out = { total: 0, byStatus, agent: 0, human: 0, unassigned: 0 };
    for (const g of r.rows) {
      const n = Number(g.n);
      byStatus.set(g.status, (byStatus.get(g.status) ?? 0) + n);
      out.total += n;
      if (!isDoneStatus(g.status)) out[g.kind] += n;
    }
    return out;
  }

  async all(): Promise<WorkItem[]> {
    const r = await this.c.query<Row>(`SELECT ${COLUMNS} FROM work_items ORDER BY id`);
    return r.rows.map(toItem);
  }

  /** Append a check run; the same run copied again is kept once. */
  async recordCheckRun(run: CheckRun): Promise<void> {
    await this.c.query(
      `INSERT INTO check_runs (repo_root, name, command, status, exit_code, duration_ms, output_tail, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [
        ...[run.repoRoot, run.name, run.command, run.status, run.exitCode, run.durationMs],
        ...[run.outputTail, run.finishedAt],
      ],
    );
  }

  /** The most recent run of each check name in a repository, by name. */
  async latestCheckRuns(repoRoot: string): Promise<CheckRun[]> {
    const r = await this.c.query(
      `SELECT DISTINCT ON (name) * FROM check_runs WHERE repo_root = $1 ORDER BY name, id DESC`,
      [repoRoot],
    );
    return r.rows.map((x) => ({
      repoRoot: x.repo_root,
      name: x.name,
      command: x.command,
      status: x.status,
      exitCode: x.exit_code,
      durationMs: x.duration_ms,
      outputTail: x.output_tail,
      finishedAt: x.finished_at,
    }));
  }
}

/** Connections that already carry a no-op `error` listener. */
const guarded = new WeakSet<PoolClient>();
/** Connections whose session lock_timeout is the busy timeout. */
const timed = new WeakSet<PoolClient>();

export interface PgStoreOptions {
  /** How long a transaction waits for another's row lock before it is
   * reported busy (default: the SQLite store's 5 s). */
  busyTimeoutMs?: number;
  /** Connections kept (default 4). */
  maxConnections?: number;
}

/**
 * The team board in PostgreSQL: the same items, rules and busy answer as the
 * SQLite board, shared by every instance that names the same database. All
 * calls are asynchronous (node-postgres), so nothing waits on the event loop.
 */
export class PgBoardStore {
  private constructor(
    private readonly pool: Pool,
    readonly location: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** Connect and bring the schema up to date. */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgBoardStore> {
    // Loaded on demand: a SQLite-only instance never pays for the client.
    const { default: pg } = await import("pg");
    const busyTimeoutMs = Math.max(1, Math.trunc(options.busyTimeoutMs ?? BUSY_TIMEOUT_MS));
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 4,
      application_name: "ccmsg",
    });
    // An idle connection the server dropped must not crash the instance;
    // the next query opens a new one.
    pool.on("error", () => {});
    const store = new PgBoardStore(pool, redactUrl(url), busyTimeoutMs);
    try {
      const client = await pool.connect();
      try {
        await migratePg(client);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end();
      throw store.failed(error);
    }
    return store;
  }

  /** Queries outside a transaction (each one its own snapshot). */
  readonly items = (): PgWorkItems => new PgWorkItems(this.pool);

  /** KV statements, each its own transaction; failures mapped as `write`
   * maps them (a row lock held past the timeout is `STATE_STORE_BUSY`). */
  async kv<T>(fn: (kv: PgKvTable) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      // Outside a transaction a statement waits for a row lock no longer
      // than a transaction's SET LOCAL lets it: set once per connection.
      if (!timed.has(client)) {
        await client.query(`SET lock_timeout = ${this.busyTimeoutMs}`);
        timed.add(client);
      }
      return await fn(new PgKvTable(client));
    } catch (error) {
      throw this.failed(error);
    } finally {
      client.release();
    }
  }

  /**
   * Run `fn` in one transaction whose row locks wait at most the busy
   * timeout (`lock_timeout`); a wait that runs out rolls back and fails with
   * `STATE_STORE_BUSY`, as on SQLite.
   */
  async write<T>(fn: (items: PgWorkItems, client: PoolClient) => Promise<T>): Promise<T> {
    const lockTimeout = `SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(this.busyTimeoutMs))}`;
    return this.transaction(["BEGIN", lockTimeout], (client) =>
      fn(new PgWorkItems(client), client),
    );
  }

  /** Run `fn` over one consistent snapshot (REPEATABLE READ, read only). */
  async read<T>(fn: (items: PgWorkItems) => Promise<T>): Promise<T> {
    return this.transaction(["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"], (client) =>
      fn(new PgWorkItems(client)),
    );
  }

  /** `fn` between `opening` statements and COMMIT on one pooled client;
   * rolled back and mapped (busy → STATE_STORE_BUSY) on any failure. */
  private async transaction<T>(
    opening: readonly string[],
    fn: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await this.connect();
    try {
      for (const sql of opening) await client.query(sql);
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw this.failed(error);
    } finally {
      client.release();
    }
  }

  /**
   * Hear every committed change to `work_items`, whoever made it (this
   * instance, another instance, the CLI), as batches of item ids. One
   * dedicated connection LISTENs; stop it with the returned function. When
   * that connection is lost, `lost` is called once and nothing more is heard
   * (the caller listens again and catches up). `more` hears other tables'
   * channels on the same connection, their payloads batched the same way.
   */
  async listen(
    onIds: (ids: string[]) => void,
    lost: (error: unknown) => void,
    more: Record<string, (payloads: string[]) => void> = {},
  ): Promise<() => Promise<void>> {
    const client = await this.connect();
    const heard = new Map<string, (payloads: string[]) => void>([
      ["ccmsg_work_items", onIds],
      ...Object.entries(more),
    ]);
    let pending = new Map<string, Set<string>>();
    let scheduled = false;
    let gone = false;
    const onNotify = (n: Notification) => {
      if (!heard.has(n.channel) || n.payload === undefined) return;
      const set = pending.get(n.channel) ?? new Set();
      set.add(n.payload);
      pending.set(n.channel, set);
      if (scheduled) return;
      scheduled = true;
      // Notifications of one burst arrive together: hand them over as one batch.
      setImmediate(() => {
        scheduled = false;
        const batches = pending;
        pending = new Map();
        for (const [channel, payloads] of batches) heard.get(channel)!([...payloads]);
      });
    };
    const onError = (error: unknown) => {
      if (gone) return;
      gone = true;
      client.off("notification", onNotify);
      client.release(error instanceof Error ? error : true);
      lost(error);
    };
    client.on("notification", onNotify);
    client.on("error", onError);
    try {
      for (const channel of heard.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      gone = true;
      client.release(true);
      throw this.failed(error);
    }
    return async () => {
      if (gone) return;
      gone = true;
      client.off("notification", onNotify);
      await client.query("UNLISTEN *").catch(() => {});
      client.off("error", onError);
      client.release();
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async connect(): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failed(error);
    }
    // A connection lost while checked out fails its query; without a
    // listener its `error` event would end the process.
    if (!guarded.has(client)) {
      guarded.add(client);
      client.on("error", () => {});
    }
    return client;
  }

  /** Busy becomes `STATE_STORE_BUSY`; an unreachable server is named
   * (without its password); our own errors pass through. */
  private failed(error: unknown): unknown {
    const code = (error as { code?: unknown })?.code;
    if (typeof code === "string" && BUSY_SQLSTATES.has(code)) return pgBusy(this.location, error);
    if (code === "ECONNREFUSED" || code === "ENOENT" || code === "ENOTFOUND") {
      return contractError(
        "internal_error",
        `cannot reach the board database ${this.location} (${code})`,
        { cause: error },
      );
    }
    return error;
  }
}
