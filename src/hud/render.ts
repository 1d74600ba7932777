import { isBusy } from "../contract/busy.js";
import type { HudStatus } from "../contract/ecc/hud.js";
import { formatDuration } from "../harness/claude/statusline.js";
import { cacheLeftMs, type SessionLlm } from "../state/llm-session-file.js";

// The HUD payload as a person reads it on a terminal. A missing signal reads
// "unavailable" — never blank, never as if it were fine.

const NA = "unavailable";

function missing(v: unknown): boolean {
  return v === null || v === undefined || v === "unknown" || (Array.isArray(v) && v.length === 0);
}

function field(v: unknown): string {
  return missing(v) ? NA : String(v);
}

type Section = Record<string, unknown> | undefined;

function section(v: unknown): Section {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

export interface RenderExtras {
  /** The name of each local check, in the payload's order (see HudResult);
   * a check without one is shown by its command. */
  localCheckNames?: readonly string[];
  /** What an LLM gateway reported of the session (HudResult.gateway). */
  gateway?: SessionLlm;
  /** "Now" for the busy mark and the cache countdown (tests). */
  now?: number;
}

/** The gateway's view: busy or idle, the cache countdown, its count. */
function gatewayText(g: SessionLlm, now: number): string {
  const left = cacheLeftMs(g, now);
  const cache =
    left === undefined
      ? "no warm cache"
      : `cache warm ${formatDuration(left)} more${g.cache_ttl_secs === undefined ? "" : ` (${formatDuration(g.cache_ttl_secs * 1000)} window)`}`;
  const source = g.requests > 0 ? `; cost from the gateway (${g.requests} requests)` : "";
  return `${isBusy(g, now) ? "busy" : "idle"}, ${cache}${source}`;
}

/** Spend against budget, saying only what is known. */
function costText(cost: Section): string {
  const usd = (v: unknown) => (typeof v === "number" ? `$${v.toFixed(2)}` : undefined);
  const spent = usd(cost?.sessionUsd);
  const budget = usd(cost?.budgetUsd);
  if (spent === undefined) return budget === undefined ? NA : `${NA} (budget ${budget})`;
  if (budget === undefined) return `${spent} this session (no budget set)`;
  return `${spent} of ${budget} budget (${field(cost?.trend)})`;
}

export function renderHud(p: HudStatus, extras: RenderExtras = {}): string {
  const lines: string[] = [];
  const row = (label: string, text: string) => lines.push(`${label.padEnd(9)} ${text}`);
  /** A row drawn from one section of the payload; "unavailable" without it. */
  const sectionRow = (label: string, v: unknown, text: (s: Record<string, unknown>) => string) => {
    const s = section(v);
    row(label, s === undefined ? NA : text(s));
  };

  const ctx = section(p.context);
  const cw = section(ctx?.contextWindow);
  row(
    "session",
    `${field(ctx?.sessionId)} · harness ${field(ctx?.harness)} · model ${field(ctx?.model)}`,
  );
  row(
    "repo",
    `${field(ctx?.repo)} · branch ${field(ctx?.branch)} · worktree ${field(ctx?.worktree)}`,
  );
  row(
    "context",
    missing(cw?.remainingPct) ? NA : `${cw?.remainingPct}% left (${field(cw?.pressure)})`,
  );

  sectionRow("tools", p.toolCalls, (tools) => {
    const last = section(tools.lastTool);
    const parts = [`${field(tools.total)} calls`];
    if (!missing(tools.pending)) parts.push(`${tools.pending} pending`);
    if (!missing(tools.stale)) parts.push(`${tools.stale} stale`);
    if (last !== undefined) parts.push(`last ${field(last.name)} (${field(last.status)})`);
    return parts.join(" · ");
  });
  row(
    "agents",
    Array.isArray(p.activeAgents) && p.activeAgents.length > 0
      ? p.activeAgents.map((a) => `${field(a.id)} ${field(a.state)}`).join(", ")
      : NA,
  );

  sectionRow("todos", p.todos, (todos) => {
    const counts = section(todos.counts);
    return `${field(todos.inProgress)} — ${counts?.pending ?? "?"} pending, ${counts?.inProgress ?? "?"} in progress, ${counts?.completed ?? "?"} completed`;
  });

  const checks = section(p.checks);
  const list = (v: unknown, name: (c: Record<string, unknown>, i: number) => string) =>
    Array.isArray(v) && v.length > 0
      ? (v as Record<string, unknown>[]).map((c, i) => `${name(c, i)} ${c.status}`).join(", ")
      : NA;
  const names = extras.localCheckNames ?? [];
  row("checks", `local: ${list(checks?.local, (c, i) => names[i] ?? String(c.command))}`);
  row("", `remote: ${list(checks?.remote, (c) => String(c.name))}`);

  row("cost", costText(section(p.cost)));
  if (extras.gateway !== undefined)
    row("llm", gatewayText(extras.gateway, extras.now ?? Date.now()));
  const tokens = section(section(p.cost)?.tokens);
  if (tokens !== undefined)
    row(
      "tokens",
      `${field(tokens.total)} (input ${field(tokens.input)}, output ${field(tokens.output)}, cache write ${field(tokens.cacheCreation)}, cache read ${field(tokens.cacheRead)})`,
    );

  const risk = section(p.risk);
  const reasons = Array.isArray(risk?.reasons) ? (risk.reasons as string[]) : [];
  row("risk", `${field(risk?.status)}${reasons.length > 0 ? `: ${reasons.join("; ")}` : ""}`);

  const q = section(p.queueState);
  sectionRow(
    "github",
    q?.github,
    (gh) =>
      `${field(gh.openPullRequests)} open PRs, ${field(gh.openIssues)} open issues, ${field(gh.openDiscussions)} discussions`,
  );
  const count = (v: unknown) => (Array.isArray(v) ? String(v.length) : NA);
  row(
    "queues",
    `merge ${count(q?.mergeQueue)}, conflict ${count(q?.conflictQueue)}, stale salvage ${count(q?.staleSalvageQueue)}`,
  );

  const controls = section(p.sessionControls);
  const supported = Array.isArray(controls?.supported) ? (controls.supported as string[]) : [];
  const blocked = Array.isArray(controls?.blocked)
    ? (controls.blocked as { control: string; reason: string }[])
    : [];
  row("controls", supported.length > 0 ? supported.join(" ") : NA);
  for (const b of blocked) row("", `✗ ${b.control}: ${b.reason}`);

  const sync = section(p.sync);
  const ghSync = section(sync?.GitHub);
  const handoff = section(sync?.handoff);
  const linear = section(sync?.Linear);
  const pr =
    typeof ghSync?.latestPullRequest === "number" ? `PR #${ghSync.latestPullRequest}` : `PR ${NA}`;
  row("sync", `GitHub ${field(ghSync?.repo)} ${pr}`);
  row(
    "",
    `handoff ${field(handoff?.path)}${handoff?.written === true ? " (written)" : handoff?.written === false ? " (not written)" : ""}`,
  );
  row(
    "",
    missing(linear?.project)
      ? `Linear ${NA}`
      : `Linear ${linear?.project} (health ${field(linear?.health)})${linear?.issueCapacityBlocked === true ? " — issue creation blocked: workspace capacity" : ""}`,
  );
  return lines.join("\n");
}
