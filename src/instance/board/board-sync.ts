import type { MutationRunner } from "../../board/runner.js";
import type { SyncApplied, SyncResult } from "../../board/sync/apply.js";
import type { CcmsgConfig } from "../../config/config.js";
import type { WorkItem } from "../../contract/ecc/board.js";
import type { Db } from "../../store/database.js";
import { isStoreBusy } from "../../store/state-store.js";
import type { SyncSource } from "../../store/sync-runs.js";
import type { Logger } from "../../util/logger.js";

// The board's syncs on the interval the config sets (`sync.github.
// interval_seconds`, `sync.linear.interval_seconds`), inside the instance
// and off its request paths: gh runs as child processes and Linear is
// fetched, both awaited; the result is written by a board mutation worker
// (one transaction), so nothing here holds the event loop. A source's runs
// never overlap: a tick that finds the last run going is skipped.

export interface BoardSyncDeps {
  config: CcmsgConfig;
  env: NodeJS.ProcessEnv;
  cwd: string;
  log: Logger;
  db: Db;
  dbPath: string;
  runner: MutationRunner;
  /** Tell the board's watchers what changed. */
  changed(items: WorkItem[]): void;
}

/** The first run waits this long after start (the socket is up first). */
const FIRST_RUN_MS = 1000;
/** Both mutation slots taken: try again this often, this many times. */
const BUSY_RETRY_MS = 500;
const BUSY_RETRIES = 20;
/** The syncs' code (gh, Linear), loaded only when one is scheduled. */
const syncCode = () => import("../../board/sync/run.js");
type SyncCode = Awaited<ReturnType<typeof syncCode>>;

export class BoardSyncScheduler {
  private readonly timers = new Map<SyncSource, NodeJS.Timeout>();
  private readonly running = new Map<SyncSource, Promise<void>>();
  private stopped = false;

  constructor(private readonly deps: BoardSyncDeps) {}

  /** Schedule each configured source; a source without an interval (or a
   * Linear sync without a project) runs only on demand. */
  start(): void {
    const s = this.deps.config.sync;
    if (s?.github?.interval_seconds === undefined && s?.linear?.interval_seconds === undefined)
      return;
    syncCode().then(
      (code) => this.scheduleConfigured(code),
      (error: unknown) => this.deps.log.warn({ err: error }, "board sync not scheduled"),
    );
  }

  private scheduleConfigured({ linearProject }: SyncCode): void {
    const s = this.deps.config.sync;
    if (s?.github?.interval_seconds !== undefined)
      this.schedule("github", FIRST_RUN_MS, s.github.interval_seconds * 1000);
    if (s?.linear?.interval_seconds !== undefined) {
      if (linearProject({ source: "linear" }, this.deps.config) === undefined)
        this.deps.log.warn("sync.linear has an interval but no project: not scheduled");
      else this.schedule("linear", FIRST_RUN_MS, s.linear.interval_seconds * 1000);
    }
  }

  private schedule(source: SyncSource, delay: number, every: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      if (!this.running.has(source)) {
        const run = this.run(source).finally(() => this.running.delete(source));
        this.running.set(source, run);
      }
      this.schedule(source, every, every);
    }, delay);
    timer.unref();
    this.timers.set(source, timer);
  }

  private async run(source: SyncSource): Promise<void> {
    const { log } = this.deps;
    try {
      const { runSync, githubOpenOnBoard, linearOpenOnBoard, linearLastCreate } = await syncCode();
      const report = await runSync(
        { source },
        {
          config: this.deps.config,
          cwd: this.deps.cwd,
          env: this.deps.env,
          // Stages are for a person at the CLI; the log gets each outcome.
          progress: () => {},
          openOnBoard: (repo) => githubOpenOnBoard(this.deps.db, repo),
          linearOnBoard: (id) => linearOpenOnBoard(this.deps.db, id),
          linearLastCreate: () => linearLastCreate(this.deps.db),
          apply: async (result) => {
            const applied = (await this.mutate("sync", result)) as SyncApplied;
            if (applied.changed.length > 0) this.deps.changed(applied.changed);
            return applied;
          },
          fail: async (f) => {
            await this.mutate("sync-failed", f);
          },
        },
      );
      if (report.ok)
        log.info({ source, target: report.target, counts: report.counts }, "board sync");
      else log.warn({ source, target: report.target, error: report.message }, "board sync failed");
    } catch (error) {
      log.warn({ source, err: error }, "board sync failed");
    }
  }

  /** A board mutation through the shared two-slot runner; when both slots
   * are taken the sync waits and tries again rather than failing. */
  private async mutate(
    action: "sync" | "sync-failed",
    args: SyncResult | Record<string, unknown>,
  ): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new Error("the instance is stopping");
      try {
        return await this.deps.runner.run(
          this.deps.dbPath,
          action,
          args as unknown as Record<string, unknown>,
        );
      } catch (error) {
        if (!isStoreBusy(error) || attempt >= BUSY_RETRIES) throw error;
        await new Promise((r) => setTimeout(r, BUSY_RETRY_MS).unref());
      }
    }
  }

  /** Stop scheduling; a run already writing finishes (the runner waits for
   * it), one still reading writes nothing. */
  dispose(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
