import type { LlmStatusPageConfig } from "../../config/llm.js";
import type {
  LlmOfficialState,
  LlmStatusComponent,
  LlmStatusIncident,
  LlmStatusOfficial,
} from "../../contract/llm.js";
import type { Clock } from "../../util/clock.js";

// A provider's official status page in `llm_status` (contract §5.4
// `official`, DR-0043 update): an Atlassian Statuspage's
// `/api/v2/summary.json`, polled off the request paths (fetch with a
// timeout), mapped into the contract's vocabulary. A failed poll keeps the
// last good reading, marked stale, with the reason.

const DEFAULT_INTERVAL_SECONDS = 60;
/** A poll that has not answered by then failed. */
const FETCH_TIMEOUT_MS = 10_000;
/** A summary is tens of KiB; anything this big is not one. */
const MAX_SUMMARY_BYTES = 1024 * 1024;

/** The page's overall indicator in the contract's words. */
const INDICATOR: Record<string, LlmOfficialState> = {
  none: "operational",
  minor: "degraded",
  major: "partial_outage",
  critical: "major_outage",
  maintenance: "maintenance",
};

/** A component's status in the contract's words. */
const COMPONENT: Record<string, LlmOfficialState> = {
  operational: "operational",
  degraded_performance: "degraded",
  partial_outage: "partial_outage",
  major_outage: "major_outage",
  under_maintenance: "maintenance",
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const time = (v: unknown): number | undefined => {
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
};

/** `summary.json` → the contract's `official`; undefined when the body is not
 * a summary (no `status.indicator`). Group components only hold others: they
 * are left out. Unresolved incidents and maintenances in progress are listed,
 * newest update's text as `latest_update`. */
export function officialOf(
  summary: unknown,
  source: string,
  observedAt: number,
): LlmStatusOfficial | undefined {
  if (!isObject(summary) || !isObject(summary.status)) return undefined;
  const indicator = str(summary.status.indicator);
  if (indicator === undefined) return undefined;
  const components: LlmStatusComponent[] = [];
  for (const c of Array.isArray(summary.components) ? summary.components : []) {
    if (!isObject(c) || c.group === true) continue;
    const name = str(c.name);
    if (name === undefined) continue;
    const id = str(c.id);
    const state = COMPONENT[str(c.status) ?? ""] ?? "unknown";
    components.push({ ...(id === undefined ? {} : { id }), name, state });
  }
  const incidents: LlmStatusIncident[] = [];
  const listed = [
    ...(Array.isArray(summary.incidents) ? summary.incidents : []),
    ...(Array.isArray(summary.scheduled_maintenances)
      ? summary.scheduled_maintenances.filter((m) => isObject(m) && m.status === "in_progress")
      : []),
  ];
  for (const i of listed) {
    if (!isObject(i)) continue;
    const name = str(i.name);
    if (name === undefined) continue;
    const updates = Array.isArray(i.incident_updates) ? i.incident_updates.filter(isObject) : [];
    // Statuspage lists updates newest first; sort anyway, by their time.
    const latest = updates.sort((a, b) => (time(b.created_at) ?? 0) - (time(a.created_at) ?? 0))[0];
    const affected = (Array.isArray(i.components) ? i.components : [])
      .map((c) => (isObject(c) ? str(c.name) : undefined))
      .filter((n): n is string => n !== undefined);
    const fields: Partial<LlmStatusIncident> = {
      id: str(i.id),
      state: str(i.status),
      impact: str(i.impact),
      created_at: time(i.created_at),
      updated_at: time(i.updated_at),
      url: str(i.shortlink),
      latest_update: str(latest?.body),
      scope: affected.length === 0 ? undefined : affected.join(", "),
    };
    const incident: LlmStatusIncident = { name };
    for (const [k, v] of Object.entries(fields))
      if (v !== undefined) (incident as Record<string, unknown>)[k] = v;
    incidents.push(incident);
  }
  return {
    state: INDICATOR[indicator] ?? "unknown",
    source: "statuspage",
    source_url: source,
    observed_at: observedAt,
    components,
    incidents,
  };
}

/** The summary's address under a page's base URL. */
export function summaryUrl(page: string): string {
  return `${page.replace(/\/+$/, "")}/api/v2/summary.json`;
}

/** One poll: the reading, or why there is none. Never throws. */
export async function fetchOfficial(
  page: string,
  now: () => number,
  stop?: AbortSignal,
  timeoutMs = FETCH_TIMEOUT_MS,
): Promise<{ ok: LlmStatusOfficial } | { error: string }> {
  // One signal for the timeout and the instance's stop (AbortSignal.any is
  // newer than the Node 20 this runs on).
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const onStop = () => abort.abort();
  stop?.addEventListener("abort", onStop, { once: true });
  try {
    const res = await fetch(summaryUrl(page), {
      headers: { accept: "application/json", "user-agent": "ccmsg" },
      redirect: "follow",
      signal: abort.signal,
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { error: `HTTP ${res.status}` };
    }
    const text = await boundedText(res);
    if (text === undefined) return { error: "summary too large" };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { error: "summary is not JSON" };
    }
    const official = officialOf(body, page, now());
    return official === undefined ? { error: "not a Statuspage summary" } : { ok: official };
  } catch (error) {
    if (timedOut) return { error: "timed out" };
    // fetch says only "fetch failed"; the cause names the network error.
    const e = error as Error & { cause?: { code?: unknown } };
    const code = typeof e.cause?.code === "string" ? ` (${e.cause.code})` : "";
    return { error: `${e.message || "fetch failed"}${code}` };
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", onStop);
  }
}

/** The body as text, or undefined past MAX_SUMMARY_BYTES (read no further). */
async function boundedText(res: Response): Promise<string | undefined> {
  if (res.body === null) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_SUMMARY_BYTES) {
      await res.body.cancel().catch(() => {});
      return undefined;
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString("utf8");
}

/**
 * Polls one page every interval (by the instance clock, so a test moving the
 * clock makes the next poll due: `due()`), one poll at a time, and hands
 * each reading on. A failure hands on the last good reading marked stale,
 * with the error; before any good reading, an `unknown` one.
 */
export class StatusPagePoller {
  private last: LlmStatusOfficial | undefined;
  private nextAt = 0;
  private polling = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly intervalMs: number;
  /** Ends a poll in flight when the instance stops. */
  private readonly stop = new AbortController();

  constructor(
    private readonly config: LlmStatusPageConfig,
    private readonly clock: Clock,
    private readonly update: (official: LlmStatusOfficial) => void,
  ) {
    this.intervalMs = (config.interval_seconds ?? DEFAULT_INTERVAL_SECONDS) * 1000;
  }

  start(): void {
    this.due();
  }

  /** Poll now if the next poll is due by the instance clock; otherwise wait. */
  due(): void {
    if (this.closed || this.polling) return;
    const wait = this.nextAt - this.clock.now();
    clearTimeout(this.timer);
    if (wait > 0) {
      this.timer = setTimeout(() => this.due(), wait);
      this.timer.unref();
      return;
    }
    this.polling = true;
    void fetchOfficial(this.config.url, () => this.clock.now(), this.stop.signal).then((r) => {
      this.polling = false;
      if (this.closed) return;
      this.nextAt = this.clock.now() + this.intervalMs;
      if ("ok" in r) this.last = r.ok;
      if ("ok" in r) this.update(r.ok);
      else if (this.last !== undefined) this.update({ ...this.last, stale: true, error: r.error });
      else
        this.update({
          state: "unknown",
          source: "statuspage",
          source_url: this.config.url,
          components: [],
          incidents: [],
          error: r.error,
        });
      this.due();
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stop.abort();
  }
}
