import type { WorkItem } from "../contract/ecc/board.js";
import { boardCounts, countsSentence } from "../contract/ecc/lanes.js";
import { hasTable, openStateStoreReadOnly, type StateStore } from "../store/state-store.js";
import { type SyncRun, SyncRunsStore } from "../store/sync-runs.js";
import { WorkItemsStore } from "../store/work-items.js";

// `ccmsg status` — ECC's readiness summary (ecc-surfaces §2.2), field for
// field, computed from the state store by reads only.

/** ECC's window of recent skill runs the summary is computed over. */
const SKILL_WINDOW = 20;
const SUCCESS = new Set(["success", "succeeded", "passed"]);
const FAILURE = new Set(["failure", "failed", "error"]);

type Row = Record<string, unknown>;

export interface StatusDocument {
  dbPath: string;
  generatedAt: string;
  readiness: {
    status: "ok" | "attention";
    attentionCount: number;
    activeSessions: number;
    failedSkillRuns: number;
    warningInstallations: number;
    pendingGovernanceEvents: number;
    blockedWorkItems: number;
  };
  activeSessions: { activeCount: number; sessions: Row[] };
  skillRuns: {
    windowSize: number;
    summary: {
      totalCount: number;
      knownCount: number;
      successCount: number;
      failureCount: number;
      unknownCount: number;
      successRate: number | null;
      failureRate: number | null;
    };
    recent: Row[];
  };
  installHealth: {
    status: "missing" | "healthy" | "warning";
    totalCount: number;
    healthyCount: number;
    warningCount: number;
    installations: Row[];
  };
  governance: { pendingCount: number; events: Row[] };
  workItems: {
    totalCount: number;
    openCount: number;
    blockedCount: number;
    closedCount: number;
    items: WorkItem[];
  };
  /** The last run of each board sync (ccmsg's addition; DR-0040): null for a
   * source never synced. */
  sync: { github: SyncStatus | null; linear: SyncStatus | null };
}

/** A sync run as status shows it (the HUD's facts stay in the store). */
export type SyncStatus = Omit<SyncRun, "facts">;

function syncStatus(run: SyncRun | undefined): SyncStatus | null {
  if (run === undefined) return null;
  const { facts: _facts, ...rest } = run;
  return rest;
}

function json(text: unknown): unknown {
  if (typeof text !== "string") return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One decimal of a percentage, or null without known runs. */
function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 1000) / 10;
}

/** The status document of the database at `dbPath`, read without writing
 * (none there yet: every section empty). */
export function statusAt(dbPath: string, limit: number): StatusDocument {
  const store = openStateStoreReadOnly(dbPath);
  try {
    return readStatus(store, dbPath, limit);
  } finally {
    store?.close();
  }
}

/** Build the status document. `store` undefined = no database yet: every
 * section is empty (installs `missing`, which is not attention). */
export function readStatus(
  store: StateStore | undefined,
  dbPath: string,
  limit: number,
): StatusDocument {
  const all = (sql: string, ...args: unknown[]): Row[] =>
    store ? (store.db.prepare(sql).all(...args) as Row[]) : [];
  const one = (sql: string, ...args: unknown[]): number =>
    store ? ((store.db.prepare(sql).get(...args) as { n: number }).n ?? 0) : 0;
  const has = (table: string) => store !== undefined && hasTable(store.db, table);
  const read = () => {
    const activeWhere = "ended_at IS NULL AND state IN ('active', 'running', 'idle')";
    const sessions = has("sessions")
      ? all(
          `SELECT * FROM sessions WHERE ${activeWhere} ORDER BY COALESCE(started_at, ended_at, '') DESC, id DESC LIMIT ?`,
          limit,
        ).map((r) => {
          const snapshot = json(r.snapshot) as { workers?: unknown[] } | null;
          return {
            id: r.id,
            adapterId: r.adapter_id,
            harness: r.harness,
            state: r.state,
            repoRoot: r.repo_root,
            startedAt: r.started_at,
            endedAt: r.ended_at,
            snapshot,
            workerCount: Array.isArray(snapshot?.workers) ? snapshot.workers.length : 0,
          };
        })
      : [];
    const activeCount = has("sessions")
      ? one(`SELECT count(*) AS n FROM sessions WHERE ${activeWhere}`)
      : 0;

    const runs = has("skill_runs")
      ? all("SELECT * FROM skill_runs ORDER BY created_at DESC, id DESC LIMIT ?", SKILL_WINDOW)
      : [];
    const outcome = (r: Row) => String(r.outcome ?? "").toLowerCase();
    const successCount = runs.filter((r) => SUCCESS.has(outcome(r))).length;
    const failureCount = runs.filter((r) => FAILURE.has(outcome(r))).length;
    const known = successCount + failureCount;

    const installs = has("install_state")
      ? all("SELECT * FROM install_state ORDER BY installed_at DESC")
      : [];
    const healthy = (r: Row) => Boolean(r.source_version) && Boolean(r.installed_at);
    const warningCount = installs.filter((r) => !healthy(r)).length;

    const pendingCount = has("governance_events")
      ? one("SELECT count(*) AS n FROM governance_events WHERE resolved_at IS NULL")
      : 0;
    const events = has("governance_events")
      ? all(
          "SELECT * FROM governance_events WHERE resolved_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?",
          limit,
        )
      : [];

    // ECC's classes are the board's lanes, counted where the board counts
    // them: done is closed, blocked needs attention (and still counts as open).
    const board = boardCounts(
      has("work_items")
        ? all("SELECT status, count(*) AS n FROM work_items GROUP BY status").map(
            (r) => [r.status as string, r.n as number] as const,
          )
        : [],
    );
    const attention = board.blocked;
    const items = has("work_items") ? new WorkItemsStore(store!.db).recent(limit) : [];

    const runs_ = has("sync_runs") ? new SyncRunsStore(store!.db) : undefined;
    const sync = {
      github: syncStatus(runs_?.get("github")),
      linear: syncStatus(runs_?.get("linear")),
    };

    const failedSkillRuns = failureCount;
    const attentionCount = failedSkillRuns + warningCount + pendingCount + attention;
    const doc: StatusDocument = {
      dbPath,
      generatedAt: new Date().toISOString(),
      readiness: {
        status: attentionCount > 0 ? "attention" : "ok",
        attentionCount,
        activeSessions: activeCount,
        failedSkillRuns,
        warningInstallations: warningCount,
        pendingGovernanceEvents: pendingCount,
        blockedWorkItems: attention,
      },
      activeSessions: { activeCount, sessions },
      skillRuns: {
        windowSize: SKILL_WINDOW,
        summary: {
          totalCount: runs.length,
          knownCount: known,
          successCount,
          failureCount,
          unknownCount: runs.length - known,
          successRate: rate(successCount, known),
          failureRate: rate(failureCount, known),
        },
        recent: runs.map((r) => ({
          id: r.id,
          skillId: r.skill_id,
          skillVersion: r.skill_version,
          sessionId: r.session_id,
          taskDescription: r.task_description,
          outcome: r.outcome,
          failureReason: r.failure_reason,
          tokensUsed: r.tokens_used,
          durationMs: r.duration_ms,
          userFeedback: r.user_feedback,
          createdAt: r.created_at,
        })),
      },
      installHealth: {
        status: installs.length === 0 ? "missing" : warningCount > 0 ? "warning" : "healthy",
        totalCount: installs.length,
        healthyCount: installs.length - warningCount,
        warningCount,
        installations: installs.map((r) => {
          const modules = json(r.modules);
          const operations = json(r.operations);
          return {
            targetId: r.target_id,
            targetRoot: r.target_root,
            profile: r.profile,
            modules,
            operations,
            installedAt: r.installed_at,
            sourceVersion: r.source_version,
            moduleCount: Array.isArray(modules) ? modules.length : 0,
            operationCount: Array.isArray(operations) ? operations.length : 0,
            status: healthy(r) ? "healthy" : "warning",
          };
        }),
      },
      governance: {
        pendingCount,
        events: events.map((r) => ({
          id: r.id,
          sessionId: r.session_id,
          eventType: r.event_type,
          payload: json(r.payload),
          resolvedAt: r.resolved_at,
          resolution: r.resolution,
          createdAt: r.created_at,
        })),
      },
      workItems: {
        totalCount: board.total,
        openCount: board.open,
        blockedCount: board.blocked,
        closedCount: board.done,
        items,
      },
      sync,
    };
    return doc;
  };
  // One snapshot for every section, so the counts agree with each other.
  return store ? store.read(read) : read();
}

/** The document's work-item counts under the board's names. */
function workItemCounts(d: StatusDocument) {
  const w = d.workItems;
  return { total: w.totalCount, open: w.openCount, blocked: w.blockedCount, done: w.closedCount };
}

/** The human-readable form: ECC's sections, in its order. */
export function statusText(d: StatusDocument): string {
  const r = d.readiness;
  const lines = [
    `Readiness: ${r.status} (${r.attentionCount} need attention)`,
    `Active sessions: ${d.activeSessions.activeCount}`,
    ...d.activeSessions.sessions.map((s) => `  ${s.id}  ${s.state}  ${s.repoRoot ?? ""}`.trimEnd()),
    `Skill runs: ${d.skillRuns.summary.totalCount} recent, ${d.skillRuns.summary.failureCount} failed${
      d.skillRuns.summary.successRate === null
        ? ""
        : `, ${d.skillRuns.summary.successRate}% success`
    }`,
    `Install health: ${d.installHealth.status} (${d.installHealth.healthyCount} healthy, ${d.installHealth.warningCount} warning)`,
    `Pending governance: ${d.governance.pendingCount}`,
    ...d.governance.events.map((e) => `  ${e.id}  ${e.eventType}`),
    `Work items: ${countsSentence(workItemCounts(d))}`,
    ...d.workItems.items.map(
      (i) => `  ${i.id}  [${i.status}] ${i.title}${i.owner ? ` — ${i.owner}` : ""}`,
    ),
    ...syncLines(d),
  ];
  return lines.join("\n");
}

/** The Markdown form, values in back-ticks. */
export function statusMarkdown(d: StatusDocument): string {
  const r = d.readiness;
  const v = (x: unknown) => `\`${x === null || x === undefined ? "—" : String(x)}\``;
  return [
    "# ECC Status",
    "",
    "## Readiness",
    `- Status: ${v(r.status)}`,
    `- Attention: ${v(r.attentionCount)}`,
    "",
    "## Active Sessions",
    `- Active: ${v(d.activeSessions.activeCount)}`,
    ...d.activeSessions.sessions.map((s) => `- ${v(s.id)} ${v(s.state)} ${v(s.repoRoot)}`),
    "",
    "## Skill Runs",
    `- Recent: ${v(d.skillRuns.summary.totalCount)}, failed ${v(d.skillRuns.summary.failureCount)}, success rate ${v(d.skillRuns.summary.successRate)}`,
    "",
    "## Install Health",
    `- Status: ${v(d.installHealth.status)} (${v(d.installHealth.healthyCount)} healthy, ${v(d.installHealth.warningCount)} warning)`,
    "",
    "## Governance",
    `- Pending: ${v(d.governance.pendingCount)}`,
    ...d.governance.events.map((e) => `- ${v(e.id)} ${v(e.eventType)}`),
    "",
    "## Work Items",
    `- ${countsSentence(workItemCounts(d), v)}`,
    ...d.workItems.items.map((i) => `- ${v(i.id)} ${v(i.status)} ${i.title}`),
    "",
    "## Sync",
    ...syncLines(d).map((l) => `- ${l.replace(/^Sync /, "")}`),
    "",
  ].join("\n");
}

/** One line per source: never synced, or the last run's outcome. */
function syncLines(d: StatusDocument): string[] {
  return (["github", "linear"] as const).map((source) => {
    const r = d.sync[source];
    if (r === null) return `Sync ${source}: never run`;
    const target = r.target === null ? "" : ` ${r.target}`;
    return r.ok
      ? `Sync ${source}:${target} ok at ${r.finishedAt} — ${r.message}`
      : `Sync ${source}:${target} FAILED at ${r.finishedAt} — ${r.message}`;
  });
}

/** The status document with its board taken from another store (a team
 * board in PostgreSQL): counts by status over every item, and the newest
 * items. */
export function withBoard(
  doc: StatusDocument,
  byStatus: Map<string, number>,
  items: WorkItem[],
): StatusDocument {
  const board = boardCounts(byStatus);
  const attentionCount =
    doc.readiness.attentionCount - doc.readiness.blockedWorkItems + board.blocked;
  return {
    ...doc,
    readiness: {
      ...doc.readiness,
      status: attentionCount > 0 ? "attention" : "ok",
      attentionCount,
      blockedWorkItems: board.blocked,
    },
    workItems: {
      totalCount: board.total,
      openCount: board.open,
      blockedCount: board.blocked,
      closedCount: board.done,
      items,
    },
  };
}
