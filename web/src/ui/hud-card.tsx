import type { ComponentChildren } from "preact";
import type { HudStatus } from "../../../src/contract/ecc/hud.js";

/**
 * The session's `ecc.hud-status.v1` card. Every section is shown; a signal
 * the HUD could not read (`null`, `[]`, `"unknown"`) reads "unknown" in grey,
 * never as healthy (ecc-surfaces §1.4): only an explicit good value is green.
 */
export function HudCard({ hud }: { hud: HudStatus }) {
  const h = hud as unknown as Record<string, Record<string, unknown> | unknown[] | null>;
  const ctx = (h.context ?? {}) as Record<string, unknown>;
  const tools = (h.toolCalls ?? {}) as Record<string, unknown>;
  const todos = (h.todos ?? {}) as Record<string, unknown>;
  const checks = (h.checks ?? {}) as Record<string, unknown>;
  const cost = (h.cost ?? {}) as Record<string, unknown>;
  const risk = (h.risk ?? {}) as Record<string, unknown>;
  const queue = (h.queueState ?? {}) as Record<string, unknown>;
  const sync = (h.sync ?? {}) as Record<string, unknown>;
  const agents = Array.isArray(h.activeAgents) ? h.activeAgents : undefined;
  const lastTool = tools.lastTool as Record<string, unknown> | null | undefined;
  const counts = todos.counts as Record<string, unknown> | null | undefined;
  const window = ctx.contextWindow as Record<string, unknown> | null | undefined;
  const gh = (queue.github ?? null) as Record<string, unknown> | null;
  const local = Array.isArray(checks.local)
    ? (checks.local as Record<string, unknown>[])
    : undefined;
  return (
    <div class="hud">
      <dl class="facts">
        <dt>Harness</dt>
        <dd>{val(ctx.harness)}</dd>
        <dt>Model</dt>
        <dd>{val(ctx.model)}</dd>
        <dt>Repository</dt>
        <dd>{val(ctx.repo)}</dd>
        <dt>Branch</dt>
        <dd>{val(ctx.branch)}</dd>
        <dt>Context left</dt>
        <dd>
          {window == null || window.remainingPct == null ? unknown() : `${window.remainingPct}%`}
          {window?.pressure != null && window.pressure !== "unknown" && ` (${window.pressure})`}
        </dd>
        <dt>Tool calls</dt>
        <dd>
          {tools.total == null ? unknown() : `${tools.total} total`}
          {typeof tools.pending === "number" && `, ${tools.pending} pending`}
          {typeof tools.stale === "number" && tools.stale > 0 && (
            <span class="badge badge-warn"> {tools.stale} stale</span>
          )}
        </dd>
        <dt>Last tool</dt>
        <dd>
          {lastTool == null || typeof lastTool !== "object"
            ? unknown()
            : `${lastTool.name ?? "?"} (${lastTool.status ?? "unknown"})`}
        </dd>
        <dt>Agents</dt>
        <dd>
          {agents === undefined
            ? unknown()
            : agents.length === 0
              ? "none"
              : `${agents.length} active`}
        </dd>
        <dt>Todos</dt>
        <dd>
          {counts == null
            ? unknown()
            : `${counts.pending ?? 0} pending, ${counts.inProgress ?? 0} in progress, ${counts.completed ?? 0} done`}
          {typeof todos.inProgress === "string" && todos.inProgress !== "unknown" && (
            <div class="hint">now: {todos.inProgress}</div>
          )}
        </dd>
        <dt>Checks</dt>
        <dd>
          {local === undefined || local.length === 0
            ? unknown()
            : local.map((c, i) => (
                <span key={i} class={`badge ${tone(c.status)}`}>
                  {String(c.command ?? "check")}: {String(c.status ?? "unknown")}
                </span>
              ))}
        </dd>
        <dt>Cost</dt>
        <dd>
          {typeof cost.sessionUsd === "number" ? `$${cost.sessionUsd.toFixed(2)}` : unknown()}
          {typeof cost.budgetUsd === "number" && ` of $${cost.budgetUsd}`}
        </dd>
        <dt>Risk</dt>
        <dd>
          <span class={`badge ${tone(risk.status)}`}>{String(risk.status ?? "unknown")}</span>
          {Array.isArray(risk.reasons) && risk.reasons.length > 0 && (
            <span class="hint"> {risk.reasons.join("; ")}</span>
          )}
        </dd>
        <dt>GitHub</dt>
        <dd>
          {gh === null || gh.openPullRequests == null
            ? unknown()
            : `${gh.openPullRequests} PRs, ${gh.openIssues ?? "?"} issues open`}
          {typeof gh?.openDiscussions === "number" && `, ${gh.openDiscussions} discussions`}
        </dd>
        <dt>Merge queue</dt>
        <dd>{mergeQueue(queue.mergeQueue)}</dd>
        <dt>Linear</dt>
        <dd>{linear(sync.Linear)}</dd>
        <dt>Handoff</dt>
        <dd>{val((sync.handoff as Record<string, unknown> | undefined)?.path)}</dd>
      </dl>
    </div>
  );
}

/** The merge queue by class (ready, waiting on checks, blocked). */
function mergeQueue(v: unknown): ComponentChildren {
  if (!Array.isArray(v)) return unknown();
  if (v.length === 0) return "empty";
  const n = (c: string) =>
    v.filter((i) => (i as Record<string, unknown>)?.classification === c).length;
  return (
    <>
      <span class="badge badge-good">{n("ready")} ready</span>{" "}
      <span class="badge">{n("waiting-check")} waiting on checks</span>{" "}
      <span class="badge badge-warn">{n("blocked")} blocked</span>
    </>
  );
}

/** The Linear project and its health, from the last sync. */
function linear(v: unknown): ComponentChildren {
  const l = (v ?? {}) as Record<string, unknown>;
  if (l.project == null || l.project === "unknown") return unknown();
  return (
    <>
      {String(l.project)}{" "}
      <span
        class={`badge ${l.health === "onTrack" ? "badge-good" : l.health === "offTrack" || l.health === "atRisk" ? "badge-warn" : ""}`}
      >
        {String(l.health ?? "unknown")}
      </span>
    </>
  );
}

function unknown(): ComponentChildren {
  return <span class="unknown">unknown</span>;
}

function val(v: unknown): ComponentChildren {
  return v == null || v === "unknown" || v === "" ? unknown() : String(v);
}

/** Green only for a value that says so; unknown is never green. */
function tone(status: unknown): string {
  const s = String(status ?? "unknown").toLowerCase();
  if (["pass", "passed", "ok", "success", "healthy"].includes(s)) return "badge-good";
  if (["fail", "failed", "error", "attention", "critical"].includes(s)) return "badge-bad";
  if (s === "unknown") return "badge-muted";
  return "badge-warn";
}
