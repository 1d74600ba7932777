import type { Db } from "./database.js";

/** The board's sync sources. */
export const SYNC_SOURCES = ["github", "linear"] as const;
export type SyncSource = (typeof SYNC_SOURCES)[number];

/** What one sync changed on the board. */
export interface SyncCounts {
  created: number;
  updated: number;
  unchanged: number;
  closed: number;
  retained: number;
}

/** The last run of one source, as `ccmsg status` and the HUD read it. */
export interface SyncRun<F = unknown> {
  source: SyncSource;
  /** `owner/name` or the Linear project; null when it could not be resolved. */
  target: string | null;
  startedAt: string;
  finishedAt: string;
  ok: boolean;
  /** One line: what happened, or why it failed. */
  message: string;
  counts: Partial<SyncCounts>;
  /** From the last run that worked (kept across failures); null before one. */
  facts: F | null;
  /** When those facts were read. */
  factsAt: string | null;
}

interface Row {
  source: SyncSource;
  target: string | null;
  started_at: string;
  finished_at: string;
  ok: number;
  message: string;
  counts: string;
  facts: string | null;
  facts_at: string | null;
}

function toRun(r: Row): SyncRun {
  return {
    source: r.source,
    target: r.target,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    ok: r.ok === 1,
    message: r.message,
    counts: JSON.parse(r.counts) as Partial<SyncCounts>,
    facts: r.facts === null ? null : (JSON.parse(r.facts) as unknown),
    factsAt: r.facts_at,
  };
}

/** The sync_runs table: one row per source, replaced by each run. */
export class SyncRunsStore {
  private readonly succeeded_;
  private readonly failed_;
  private readonly get_;
  private readonly all_;

  constructor(db: Db) {
    this.succeeded_ = db.prepare(
      `INSERT INTO sync_runs (source, target, started_at, finished_at, ok, message, counts, facts, facts_at)
       VALUES (@source, @target, @startedAt, @finishedAt, 1, @message, @counts, @facts, @finishedAt)
       ON CONFLICT(source) DO UPDATE SET target = excluded.target, started_at = excluded.started_at,
         finished_at = excluded.finished_at, ok = 1, message = excluded.message, counts = excluded.counts,
         facts = excluded.facts, facts_at = excluded.facts_at`,
    );
    // A failure keeps the facts of the last run that worked.
    this.failed_ = db.prepare(
      `INSERT INTO sync_runs (source, target, started_at, finished_at, ok, message, counts)
       VALUES (@source, @target, @startedAt, @finishedAt, 0, @message, '{}')
       ON CONFLICT(source) DO UPDATE SET target = excluded.target, started_at = excluded.started_at,
         finished_at = excluded.finished_at, ok = 0, message = excluded.message, counts = '{}'`,
    );
    this.get_ = db.prepare("SELECT * FROM sync_runs WHERE source = ?");
    this.all_ = db.prepare("SELECT * FROM sync_runs ORDER BY source");
  }

  succeeded(run: {
    source: SyncSource;
    target: string | null;
    startedAt: string;
    finishedAt: string;
    message: string;
    counts: SyncCounts;
    facts: unknown;
  }): void {
    this.succeeded_.run({
      ...run,
      counts: JSON.stringify(run.counts),
      facts: JSON.stringify(run.facts ?? null),
    });
  }

  failed(run: {
    source: SyncSource;
    target: string | null;
    startedAt: string;
    finishedAt: string;
    message: string;
  }): void {
    this.failed_.run(run);
  }

  get(source: SyncSource): SyncRun | undefined {
    const row = this.get_.get(source) as Row | undefined;
    return row === undefined ? undefined : toRun(row);
  }

  all(): SyncRun[] {
    return (this.all_.all() as Row[]).map(toRun);
  }
}
