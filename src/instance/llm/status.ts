import type {
  LlmOfficialState,
  LlmStatusOfficial,
  LlmStatusReport,
  LlmStatusService,
  LlmStatusSeverity,
} from "../../contract/llm.js";
import type { LlmEvent } from "../../gateway/event.js";
import type { Clock } from "../../util/clock.js";
import type { TopicHub } from "../topic-hub.js";

// The `llm_status` topic (contract §5.4): what the gateways' own traffic
// shows of each upstream service (DR-0043) — reachable or failing, the last
// failure (an overload is `overloaded_error`, status 529), and a severity
// from the share of failed requests lately — and, where a status page is
// configured, what the provider's page says (`official`, status-page.ts).
// A service's severity is the worse of the two.

/** Outcomes older than this no longer count, and an observation expires
 * this long after its newest request. */
const WINDOW_MS = 5 * 60_000;
/** Outcomes kept per service. */
const MAX_OUTCOMES = 200;
/** A failure share at or above this is a warning… */
const WARNING_SHARE = 0.1;
/** …and at or above this (or nothing but failures) critical. */
const CRITICAL_SHARE = 0.5;

/** How an official state weighs on a service's severity. */
const OFFICIAL_SEVERITY: Record<LlmOfficialState, LlmStatusSeverity> = {
  operational: "ok",
  degraded: "warning",
  maintenance: "warning",
  partial_outage: "critical",
  major_outage: "critical",
  unknown: "unknown",
};
const RANK: Record<LlmStatusSeverity, number> = { unknown: 0, ok: 1, warning: 2, critical: 3 };

interface Outcome {
  at: number;
  ok: boolean;
}

interface Service {
  outcomes: Outcome[];
  last_success_at?: number;
  last_failure?: { at: number; kind?: string; status?: number };
  observed_at: number;
  /** Requests already counted, so a request's end is not a second outcome. */
  seen: Set<string>;
}

/** A failed request: the provider or the way to it failed (5xx, 429, an
 * unreachable upstream). A 4xx the client caused says nothing of health. */
function failed(e: LlmEvent): boolean {
  const status = e.status ?? 0;
  return status >= 500 || status === 429 || e.error === "upstream_unreachable";
}

export class LlmStatus {
  private readonly services = new Map<string, Service>();
  /** The official reading of a service, by service id. */
  private readonly official = new Map<string, LlmStatusOfficial>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly hub: TopicHub,
  ) {}

  /** One outcome per request: its first event (a gateway may report a
   * request at its start and again at its end, which adds the error type). */
  add(events: readonly LlmEvent[]): void {
    let changed = false;
    for (const e of events) {
      if (e.status === undefined) continue;
      const id = e.upstream ?? "llm";
      const s = this.services.get(id) ?? {
        outcomes: [],
        observed_at: e.received_at,
        seen: new Set(),
      };
      const key = `${e.sid ?? ""}/${e.prefix ?? ""}/${e.received_at}`;
      if (s.seen.has(key)) {
        const last = s.last_failure;
        if (e.error !== undefined && last?.at === e.received_at) last.kind = e.error;
        changed = true;
        continue;
      }
      s.seen.add(key);
      if (s.seen.size > MAX_OUTCOMES) s.seen.delete(s.seen.values().next().value!);
      const ok = !failed(e);
      s.outcomes.push({ at: e.received_at, ok });
      if (s.outcomes.length > MAX_OUTCOMES) s.outcomes.splice(0, s.outcomes.length - MAX_OUTCOMES);
      s.observed_at = Math.max(s.observed_at, e.received_at);
      if (ok) s.last_success_at = Math.max(s.last_success_at ?? 0, e.received_at);
      else if ((s.last_failure?.at ?? 0) <= e.received_at)
        s.last_failure = {
          at: e.received_at,
          ...(e.error === undefined ? {} : { kind: e.error }),
          status: e.status,
        };
      this.services.set(id, s);
      changed = true;
    }
    if (changed) this.changed();
  }

  /** A status page's reading of service `id`; subscribers hear of it when
   * more than its time changed. */
  setOfficial(id: string, reading: LlmStatusOfficial): void {
    const before = this.official.get(id);
    this.official.set(id, reading);
    const same =
      before !== undefined &&
      JSON.stringify({ ...before, observed_at: 0 }) ===
        JSON.stringify({ ...reading, observed_at: 0 });
    if (!same) this.hub.invalidate("llm_status");
  }

  value(): LlmStatusReport {
    const now = this.clock.now();
    const services: LlmStatusService[] = [];
    const counts: Record<string, number> = { ok: 0, warning: 0, critical: 0, unknown: 0 };
    const ids = [...new Set([...this.services.keys(), ...this.official.keys()])].sort((a, b) =>
      a.localeCompare(b),
    );
    for (const id of ids) {
      const official = this.official.get(id);
      const s = this.services.get(id);
      if (s === undefined) {
        const severity = OFFICIAL_SEVERITY[official!.state];
        counts[severity] = (counts[severity] ?? 0) + 1;
        services.push({ id, name: id, severity, routes: ["/v1/messages"], official: official! });
        continue;
      }
      const recent = s.outcomes.filter((o) => o.at > now - WINDOW_MS);
      const failures = recent.filter((o) => !o.ok).length;
      const share = recent.length === 0 ? 0 : failures / recent.length;
      const newest = recent.at(-1);
      const expired = s.observed_at + WINDOW_MS <= now;
      const seen: LlmStatusSeverity =
        expired || newest === undefined
          ? "unknown"
          : share >= CRITICAL_SHARE
            ? "critical"
            : share >= WARNING_SHARE || !newest.ok
              ? "warning"
              : "ok";
      const said = official === undefined ? "unknown" : OFFICIAL_SEVERITY[official.state];
      const severity = RANK[said] > RANK[seen] ? said : seen;
      counts[severity] = (counts[severity] ?? 0) + 1;
      services.push({
        id,
        name: id,
        severity,
        routes: ["/v1/messages"],
        ...(official === undefined ? {} : { official }),
        observed: {
          state: expired || newest === undefined ? "unknown" : newest.ok ? "reachable" : "failing",
          observed_at: s.observed_at,
          expires_at: s.observed_at + WINDOW_MS,
          ...(s.last_success_at === undefined ? {} : { last_success_at: s.last_success_at }),
          ...(s.last_failure === undefined ? {} : { last_failure: s.last_failure }),
        },
      });
    }
    const order: LlmStatusSeverity[] = ["critical", "warning", "ok"];
    const overall = order.find((sev) => (counts[sev] ?? 0) > 0) ?? "unknown";
    return {
      schema_version: 1,
      generated_at: now,
      overall: { severity: overall, service_counts: counts },
      services,
    };
  }

  /** Tell subscribers; wake again when the newest observation expires. */
  changed(): void {
    this.hub.invalidate("llm_status");
    clearTimeout(this.timer);
    const newest = Math.max(0, ...[...this.services.values()].map((s) => s.observed_at));
    const wait = newest + WINDOW_MS - this.clock.now();
    if (wait <= 0) return;
    this.timer = setTimeout(() => this.changed(), wait);
    this.timer.unref();
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
