import type { FastifyInstance } from "fastify";
import { controlPaneMetrics } from "../../board/http.js";
import type { MutationRunner } from "../../board/runner.js";
import type { Db } from "../../store/database.js";
import type { Clock } from "../../util/clock.js";
import type { MeshPort } from "../mesh/port.js";
import type { SearchEngine } from "../search/engine.js";

/** What the test-only routes reach. Registered only when a test starts the
 * instance with `--test-hooks`; a production instance has none of them. */
export interface TestHooks {
  clock: Clock;
  /** Re-check what time makes expire (after the clock moved). */
  expire(): void;
  /** The board's mutation runner, for its counters. */
  runner: Pick<MutationRunner, "metrics" | "maxPageCount">;
  /** The instance's database, to make its disk "full". */
  db: Db;
  /** The search index, whose disk is "full" with it. */
  search: Pick<SearchEngine, "limitPages">;
  /** Resolves once the startup compaction finished, with the rows removed. */
  compacted(): Promise<number>;
  /** What receives a session's inbox now: `wait` (a waiter), `plain`, or none. */
  inboxReceiver(sid: string): string | undefined;
  /** The mesh's port (mesh/test-routes.ts). */
  mesh?: MeshPort;
}

/** The test-only routes, as their own encapsulated plugin. */
export async function testHooksPlugin(app: FastifyInstance, hooks: TestHooks): Promise<void> {
  app.get("/_test/board-metrics", async () => ({
    ...hooks.runner.metrics,
    ...controlPaneMetrics,
  }));
  app.get("/_test/compacted", async () => ({ removed: await hooks.compacted() }));
  // SQLite answers SQLITE_FULL exactly as on a full disk once its file may
  // not grow: a full disk without needing a filesystem to fill.
  app.post("/_test/disk-full", async (req) => {
    const full = (req.body as { full?: unknown } | undefined)?.full === true;
    const pages = full ? 1 : 1_073_741_823;
    hooks.db.pragma(`max_page_count = ${pages}`);
    // The board's mutations write through connections of their own.
    hooks.runner.maxPageCount = pages;
    hooks.search.limitPages(pages);
    return { ok: true };
  });
  // Whether a session's waiter is armed: tests post only once it is.
  app.get("/_test/inbox-receiver/:sid", async (req) => ({
    receiver: hooks.inboxReceiver((req.params as { sid: string }).sid) ?? null,
  }));
  if (hooks.mesh !== undefined) {
    const { meshTestRoutes } = await import("../mesh/test-routes.js");
    await meshTestRoutes(app, hooks.mesh);
  }
  // Move the instance clock instead of sleeping.
  app.post("/_test/clock", async (req) => {
    const ms = Number((req.body as { advance_ms?: unknown } | undefined)?.advance_ms);
    if (!Number.isFinite(ms) || ms < 0) return { ok: false, error: "advance_ms must be ≥ 0" };
    hooks.clock.advance(ms);
    hooks.expire();
    return { ok: true, now: hooks.clock.now() };
  });
}
