import { computed, effect, signal } from "@preact/signals";
import type { AgentInfo, AgentsData } from "../../../src/contract/agents.js";
import { busyUntil } from "../../../src/contract/busy.js";
import { type PerInstance, unionOf } from "../../../src/contract/fold.js";
import {
  harnessOf,
  type LastLiveSession,
  lostStateOf,
  type PeerInfo,
  type PeersData,
} from "../../../src/contract/peers.js";
import type { SessionErrorEntry, SessionErrorsData } from "../../../src/contract/session-status.js";
import { topics, wire } from "../app-state.js";
import { pins } from "../settings.js";
import { api } from "./api.js";

/**
 * Every session the console knows, as rows the views show: the instance's
 * `peers` (connected rows and lately lost ones, with the state the instance
 * derived — the console never assembles a state itself), joined with the
 * harness's own list (`agents`), the held-message counts and the pins.
 */

/** The sections of the sessions view, in order. `unmanaged` holds
 * `live_unmanaged` rows and sessions only the harness's list knows. */
export const SECTIONS = [
  { key: "waiting", label: "Needs you", hint: "waiting for a person" },
  { key: "live", label: "Live", hint: "running, reachable" },
  { key: "unmanaged", label: "Unmanaged", hint: "running, nothing here can reach it" },
  { key: "paused", label: "Paused", hint: "stopped after saying so" },
  { key: "disappeared", label: "Disappeared", hint: "gone without saying so" },
] as const;
export type SectionKey = (typeof SECTIONS)[number]["key"];

export interface SessionRow {
  sid: string;
  section: SectionKey;
  connected: boolean;
  title?: string;
  repo: string;
  ws: string;
  cwd: string;
  branch?: string;
  harness: string;
  /** Last request on a connection (connected), or last seen alive (lost). */
  lastActivity?: number;
  /** Lost rows: the newest instant it was known alive. */
  lastLive?: number;
  stoppedAt?: number;
  pinned: boolean;
  held: number;
  agent?: AgentInfo;
  /** Known only from the harness's list: it never greeted this instance. */
  agentOnly: boolean;
  model?: string;
  /** The harness error it stopped on (`session_errors`), while it lasts. */
  error?: string;
  /** When a gateway last saw inference run for it (connected rows). */
  gatewayActiveAt?: number;
}

const peers = topics.hold<PerInstance<PeersData>>("peers").state;
const agents = topics.hold<PerInstance<AgentsData>>("agents").state;
const errors = topics.hold<PerInstance<SessionErrorsData>>("session_errors").state;

export const sessionsStale = computed(() => peers.stale.value);
export const sessionsLoaded = computed(() => peers.value.value !== undefined);

/** Messages held per recipient (GET api/console/held): asked again when
 * the sessions change and every few seconds while connected. */
export const heldCounts = signal<Record<string, number>>({});

async function refreshHeld(): Promise<void> {
  try {
    heldCounts.value = (
      await api<{ counts: Record<string, number> }>("GET", "api/console/held")
    ).counts;
  } catch {}
}
let heldTimer: ReturnType<typeof setTimeout> | undefined;
/** Ask for the held counts soon (several changes in a burst ask once). */
export function heldChanged(): void {
  clearTimeout(heldTimer);
  heldTimer = setTimeout(() => void refreshHeld(), 150);
}
effect(() => {
  peers.frames.value;
  if (wire.state.value === "open") heldChanged();
});
setInterval(() => {
  if (wire.state.peek() === "open" && document.visibilityState === "visible") void refreshHeld();
}, 5000);

/** The harness a row runs in: the instance's own guess, else the harness
 * whose list has it (its config directory's name). */
function harnessOfRow(row: { transcript_path?: string }, agent: AgentInfo | undefined): string {
  const guess = harnessOf(row);
  if (guess !== "unknown" || agent === undefined) return guess;
  return /codex/i.test(agent.config_dir) ? "codex" : "claude-code";
}

function baseName(path: string): string {
  const parts = path.split("/").filter((p) => p !== "");
  return parts[parts.length - 1] ?? path;
}

export const rows = computed<SessionRow[]>(() => {
  const held = peers.value.value;
  const connected = unionOf<PeerInfo>(held, "peers");
  const lost = unionOf<LastLiveSession>(held, "last_live");
  const byAgent = new Map<string, AgentInfo>();
  for (const a of unionOf<AgentInfo>(agents.value.value, "agents")) byAgent.set(a.sid, a);
  const pinned = pins.value;
  const counts = heldCounts.value;
  const failed = new Map<string, string>();
  for (const e of unionOf<SessionErrorEntry>(errors.value.value, "errors"))
    failed.set(e.sid, e.text);
  const out: SessionRow[] = [];
  const seen = new Set<string>();
  for (const p of connected) {
    seen.add(p.sid);
    const agent = byAgent.get(p.sid);
    out.push({
      sid: p.sid,
      section:
        p.state === "waiting" ? "waiting" : p.state === "live_unmanaged" ? "unmanaged" : "live",
      connected: true,
      title: p.title ?? agent?.name,
      repo: p.repo,
      ws: p.ws,
      cwd: p.cwd,
      branch: p.branch,
      harness: harnessOfRow(p, agent),
      lastActivity: p.last_activity_at,
      pinned: pinned.has(p.sid),
      held: counts[p.sid] ?? 0,
      agent,
      agentOnly: false,
      error: failed.get(p.sid),
      gatewayActiveAt: p.gateway_active_at,
    });
  }
  for (const l of lost) {
    if (seen.has(l.sid)) continue;
    seen.add(l.sid);
    out.push({
      sid: l.sid,
      section: l.state ?? lostStateOf(l),
      connected: false,
      title: l.title,
      repo: l.repo,
      ws: l.ws,
      cwd: l.cwd,
      branch: l.branch,
      harness: harnessOfRow(l, undefined),
      lastActivity: l.last_seen_at,
      lastLive: l.last_seen_at,
      stoppedAt: l.stopped_at,
      pinned: pinned.has(l.sid),
      held: counts[l.sid] ?? 0,
      agentOnly: false,
      model: l.model,
    });
  }
  // Sessions the harness runs that never greeted this instance.
  for (const a of byAgent.values()) {
    if (seen.has(a.sid)) continue;
    out.push({
      sid: a.sid,
      section: "unmanaged",
      connected: true,
      title: a.name,
      repo: baseName(a.cwd),
      ws: baseName(a.cwd),
      cwd: a.cwd,
      harness: harnessOfRow({}, a),
      lastActivity: a.started_at,
      pinned: pinned.has(a.sid),
      held: counts[a.sid] ?? 0,
      agent: a,
      agentOnly: true,
    });
  }
  return out;
});

export const rowsBySid = computed(() => {
  const map = new Map<string, SessionRow>();
  for (const r of rows.value) map.set(r.sid, r);
  return map;
});

/** Sessions busy now, by the rule `ccmsg peers` marks with ● (the contract's
 * `busyUntil`). Read again when the soonest mark runs out, so it goes away
 * on time without a clock ticking every second. */
export const busySids = signal<ReadonlySet<string>>(new Set());
const busyCheck = signal(0);
let busyTimer: ReturnType<typeof setTimeout> | undefined;
effect(() => {
  busyCheck.value;
  const at = Date.now();
  const busy = new Set<string>();
  let next = Number.POSITIVE_INFINITY;
  for (const r of rows.value) {
    const until = busyUntil({ gateway_active_at: r.gatewayActiveAt }, at);
    if (until === undefined) continue;
    busy.add(r.sid);
    next = Math.min(next, until);
  }
  const was = busySids.peek();
  if (busy.size !== was.size || [...busy].some((s) => !was.has(s))) busySids.value = busy;
  clearTimeout(busyTimer);
  if (next !== Number.POSITIVE_INFINITY)
    busyTimer = setTimeout(() => busyCheck.value++, next - at + 1);
});

/** How a session is named on screen: its own title, else where it works. */
export function labelOf(row: { title?: string; repo: string; ws: string; sid: string }): string {
  if (row.title !== undefined && row.title.trim() !== "") return row.title;
  if (row.repo !== "" || row.ws !== "")
    return row.ws !== "" && row.ws !== row.repo ? `${row.repo}/${row.ws}` : row.repo;
  return row.sid.slice(0, 8);
}

/** Whether a row matches the search box: every word somewhere in its title,
 * place, branch or id. */
export function matches(row: SessionRow, query: string): boolean {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  if (words.length === 0) return true;
  const hay = [row.title, row.repo, row.ws, row.branch, row.sid, row.cwd, row.harness]
    .filter((x) => x !== undefined)
    .join(" ")
    .toLowerCase();
  return words.every((w) => hay.includes(w));
}
