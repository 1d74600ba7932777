import { type Static, Type } from "@sinclair/typebox";
import { request, response, topicFrame } from "./envelope.js";
import { InstanceId, Sid, Timestamp } from "./identifiers.js";
import { topicNamePattern } from "./topics.js";
import { upstream } from "./upstream.js";

// The LLM gateway as the instance relays it (contract §4.3.5, §5.4): quota,
// spend, warm prompt caches and service health. The vocabulary is the
// gateway's (hence the `llm-gateway` markers); the instance only converts names
// to snake_case and instants to Unix ms, so open strings pass through as the
// gateway spelled them.

const Count = Type.Integer({ minimum: 0 });
/** A length of time in whole seconds. */
const Secs = Type.Integer({ minimum: 0 });

// --- llm_usage_read ---

/** Whether the gateway can still act for a credential, and how a person would
 * fix it if not. */
export const LlmUsageAuth = Type.Object(
  {
    status: Type.String(),
    reason: Type.Optional(Type.String()),
    observed_at: Type.Optional(Timestamp),
    /** Absolute, so a client can open it without knowing the gateway's base. */
    login_url: Type.Optional(
      Type.String({ pattern: "^[A-Za-z][A-Za-z0-9+.-]*:", description: "an absolute URL" }),
    ),
  },
  upstream("llm-gateway", "a credential's login state"),
);
export type LlmUsageAuth = Static<typeof LlmUsageAuth>;

/** One rate-limit window as last read. */
export const LlmUsageWindow = Type.Object(
  {
    /** A fraction, 0..1. Never clamped: above 1 is a real overrun, and
     * clamping would hide it. */
    utilization: Type.Number({ minimum: 0 }),
    status: Type.String(),
    reset_at: Type.Optional(Timestamp),
    window_secs: Type.Optional(Secs),
    /** The reading predates the window's reset, so `utilization` no longer
     * describes the window in force. */
    expired: Type.Optional(Type.Boolean()),
  },
  upstream("llm-gateway", "a usage window"),
);
export type LlmUsageWindow = Static<typeof LlmUsageWindow>;

export const LlmUsageOverage = Type.Object(
  { status: Type.String(), disabled_reason: Type.Optional(Type.String()) },
  upstream("llm-gateway", "a credential's overage state"),
);
export type LlmUsageOverage = Static<typeof LlmUsageOverage>;

/** What the gateway last observed about a credential's windows. */
export const LlmUsageSnapshot = Type.Object(
  {
    observed_at: Type.Optional(Timestamp),
    overage: Type.Optional(LlmUsageOverage),
    /** By window name; the names are the gateway's data, not ours. */
    windows: Type.Record(Type.String(), LlmUsageWindow),
  },
  upstream("llm-gateway", "a usage snapshot"),
);
export type LlmUsageSnapshot = Static<typeof LlmUsageSnapshot>;

/** A limit as the provider states it. `percent` is 0..100, deliberately not
 * the 0..1 of `utilization`: each keeps its source's unit so neither is
 * converted by mistake. */
export const LlmUsageLimit = Type.Object(
  {
    kind: Type.String(),
    percent: Type.Number({ minimum: 0 }),
    severity: Type.String(),
    resets_at: Type.Optional(Timestamp),
    model: Type.Optional(Type.String()),
    is_active: Type.Optional(Type.Boolean()),
    window_secs: Type.Optional(Secs),
  },
  upstream("llm-gateway", "a provider-stated limit"),
);
export type LlmUsageLimit = Static<typeof LlmUsageLimit>;

export const LlmUsageCredential = Type.Object(
  {
    name: Type.String(),
    type: Type.Optional(Type.String()),
    /** How far usage can be known for this credential (observed, not
     * applicable, …), so "no data" is not mistaken for "no usage". */
    support: Type.String(),
    auth: Type.Optional(LlmUsageAuth),
    snapshot: Type.Optional(LlmUsageSnapshot),
    limits: Type.Optional(Type.Array(LlmUsageLimit)),
    /** Why probing upstream failed, kept apart from `auth` so a failed
     * probe is not read as a logged-out credential. */
    probe_error: Type.Optional(Type.String()),
  },
  upstream("llm-gateway", "quota of one credential"),
);
export type LlmUsageCredential = Static<typeof LlmUsageCredential>;

export const LlmUsageReadArgs = Type.Object({
  /** Probe upstream instead of answering from cache. A probe can itself use up
   * rate limit, so only a deliberate user action sets it, never a poll. */
  refresh: Type.Optional(Type.Boolean()),
});
export type LlmUsageReadArgs = Static<typeof LlmUsageReadArgs>;
export const LlmUsageReadResult = Type.Object({
  generated_at: Type.Optional(Timestamp),
  credentials: Type.Array(LlmUsageCredential),
});
export type LlmUsageReadResult = Static<typeof LlmUsageReadResult>;
export const LlmUsageReadRequest = request("llm_usage_read", LlmUsageReadArgs);
export const LlmUsageReadResponse = response("llm_usage_read", LlmUsageReadResult);

// --- llm_stats_read ---

/** Spend of one model under one credential on one day. Every member is
 * optional because the gateway may not count it, and missing is not zero. */
export const LlmStatsModelUsage = Type.Object(
  {
    requests: Type.Optional(Count),
    input_tokens: Type.Optional(Count),
    output_tokens: Type.Optional(Count),
    cache_creation_input_tokens: Type.Optional(Count),
    cache_read_input_tokens: Type.Optional(Count),
    usd: Type.Optional(Type.Number({ minimum: 0 })),
  },
  upstream("llm-gateway", "per-model usage"),
);
export type LlmStatsModelUsage = Static<typeof LlmStatsModelUsage>;

export const LlmStatsDay = Type.Object(
  {
    /** Credential name → model name → usage. Both keys are gateway data. */
    credentials: Type.Record(Type.String(), Type.Record(Type.String(), LlmStatsModelUsage)),
    /** The gateway's own total. Authoritative: summing `usd` may miss what
     * the gateway did not break down by model. */
    total_usd: Type.Optional(Type.Number({ minimum: 0 })),
  },
  upstream("llm-gateway", "one day of spend"),
);
export type LlmStatsDay = Static<typeof LlmStatsDay>;

export const LlmStatsReadArgs = Type.Object({
  /** How many days back. More than the gateway holds means "everything", not
   * an error. */
  days: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type LlmStatsReadArgs = Static<typeof LlmStatsReadArgs>;
export const LlmStatsReadResult = Type.Object({
  generated_at: Type.Optional(Timestamp),
  /** Keyed `YYYY-MM-DD` in the gateway's own time zone: a day is the
   * gateway's day, which the instance cannot re-cut. */
  days: Type.Record(Type.String(), LlmStatsDay),
});
export type LlmStatsReadResult = Static<typeof LlmStatsReadResult>;
export const LlmStatsReadRequest = request("llm_stats_read", LlmStatsReadArgs);
export const LlmStatsReadResponse = response("llm_stats_read", LlmStatsReadResult);

// --- llm_requests topic (per_instance_whole; capability llm_events) ---

/** The newest request of one conversation series, keyed by (sid, prefix): the
 * same prefix may occur under several sessions. Carries what a client needs
 * to count down the series' prompt cache. */
export const LlmRequestInfo = Type.Object(
  {
    /** When the upstream response headers arrived; the cache runs down from
     * here. */
    received_at: Timestamp,
    sid: Sid,
    instance: InstanceId,
    /** The series name. */
    prefix: Type.Optional(Type.String()),
    /** The series the session's own turns keep warm, as opposed to a
     * sub-agent's. Decided once by the instance (origin first, else unshared
     * first-used prefix, else the newest) so every client agrees. */
    main: Type.Boolean(),
    /** Whose turn issued the request, as the gateway read it. */
    origin: Type.Optional(Type.String()),
    cache_expires_at: Type.Optional(Timestamp),
    cache_ttl_secs: Type.Optional(Secs),
    cache_paused: Type.Optional(Type.Boolean()),
    cache_since_at: Type.Optional(Timestamp),
    /** 0 on the real request. */
    cache_count: Type.Optional(Count),
    next_keepalive_at: Type.Optional(Timestamp),
    cache_until_at: Type.Optional(Timestamp),
    cache_until_count: Type.Optional(Count),
    cache_breakeven_until_at: Type.Optional(Timestamp),
    cache_breakeven_count: Type.Optional(Count),
    /** Present only on the return of a keepalive. */
    keepalive: Type.Optional(Type.String()),
    ns: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    credential: Type.Optional(Type.String()),
    /** The upstream HTTP status. */
    status: Type.Optional(Type.Integer()),
  },
  upstream("llm-gateway", "one request's prompt-cache state"),
);
export type LlmRequestInfo = Static<typeof LlmRequestInfo>;

/** The whole unexpired set; an empty array is valid and means no warm cache. */
export const LlmRequestsData = Type.Array(LlmRequestInfo);
export type LlmRequestsData = Static<typeof LlmRequestsData>;
export const LlmRequestsFrame = topicFrame(topicNamePattern("llm_requests"), LlmRequestsData);
export type LlmRequestsFrame = Static<typeof LlmRequestsFrame>;

// --- llm_status topic (per_instance_whole; capability llm_status) ---

export const LLM_STATUS_SEVERITIES = ["ok", "warning", "critical", "unknown"] as const;
export type LlmStatusSeverity = (typeof LLM_STATUS_SEVERITIES)[number];
/** Closed: the instance turns any other gateway value into `unknown`, so a
 * client can colour every value it receives. */
export const LlmStatusSeverity = Type.Union(LLM_STATUS_SEVERITIES.map((s) => Type.Literal(s)));

export const LLM_OFFICIAL_STATES = [
  "operational",
  "degraded",
  "partial_outage",
  "major_outage",
  "maintenance",
  "unknown",
] as const;
export type LlmOfficialState = (typeof LLM_OFFICIAL_STATES)[number];
/** A state as the provider's own status page words it. */
export const LlmOfficialState = Type.Union(LLM_OFFICIAL_STATES.map((s) => Type.Literal(s)));

export const LLM_OBSERVED_STATES = ["reachable", "failing", "unknown"] as const;
export type LlmObservedState = (typeof LLM_OBSERVED_STATES)[number];
/** A state as the gateway saw it from its own traffic. */
export const LlmObservedState = Type.Union(LLM_OBSERVED_STATES.map((s) => Type.Literal(s)));

export const LlmStatusComponent = Type.Object(
  { id: Type.Optional(Type.String()), name: Type.String(), state: LlmOfficialState },
  upstream("llm-gateway", "a status-page component"),
);
export type LlmStatusComponent = Static<typeof LlmStatusComponent>;

export const LlmStatusIncident = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.String(),
    state: Type.Optional(Type.String()),
    impact: Type.Optional(Type.String()),
    created_at: Type.Optional(Timestamp),
    updated_at: Type.Optional(Timestamp),
    url: Type.Optional(Type.String()),
    latest_update: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
  },
  upstream("llm-gateway", "a status-page incident"),
);
export type LlmStatusIncident = Static<typeof LlmStatusIncident>;

/** What the provider says about itself. */
export const LlmStatusOfficial = Type.Object(
  {
    state: LlmOfficialState,
    source: Type.Optional(Type.String()),
    source_url: Type.Optional(Type.String()),
    observed_at: Type.Optional(Timestamp),
    /** An old reading, still shown rather than dropped. */
    stale: Type.Optional(Type.Boolean()),
    components: Type.Array(LlmStatusComponent),
    incidents: Type.Array(LlmStatusIncident),
    /** Why the last fetch of the page failed. */
    error: Type.Optional(Type.String()),
  },
  upstream("llm-gateway", "a provider's official status"),
);
export type LlmStatusOfficial = Static<typeof LlmStatusOfficial>;

export const LlmStatusFailure = Type.Object(
  {
    /** When it failed. Named by the gateway, not `*_at`-suffixed. */
    at: Type.Optional(Timestamp),
    kind: Type.Optional(Type.String()),
    /** HTTP status, when the failure had one. */
    status: Type.Optional(Type.Integer()),
  },
  upstream("llm-gateway", "the last observed failure"),
);
export type LlmStatusFailure = Static<typeof LlmStatusFailure>;

/** What the gateway's own traffic shows, which can disagree with the official
 * page in either direction. */
export const LlmStatusObserved = Type.Object(
  {
    state: LlmObservedState,
    observed_at: Type.Optional(Timestamp),
    /** After this the observation no longer holds. */
    expires_at: Type.Optional(Timestamp),
    last_success_at: Type.Optional(Timestamp),
    last_failure: Type.Optional(LlmStatusFailure),
  },
  upstream("llm-gateway", "observed reachability"),
);
export type LlmStatusObserved = Static<typeof LlmStatusObserved>;

export const LlmStatusService = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    severity: LlmStatusSeverity,
    routes: Type.Array(Type.String()),
    official: Type.Optional(LlmStatusOfficial),
    observed: Type.Optional(LlmStatusObserved),
  },
  upstream("llm-gateway", "one upstream service's health"),
);
export type LlmStatusService = Static<typeof LlmStatusService>;

export const LlmStatusOverall = Type.Object(
  {
    severity: LlmStatusSeverity,
    /** Service counts under the gateway's own keys (per severity). */
    service_counts: Type.Record(Type.String(), Count),
  },
  upstream("llm-gateway", "the summary across services"),
);
export type LlmStatusOverall = Static<typeof LlmStatusOverall>;

export const LlmStatusReport = Type.Object(
  {
    schema_version: Type.Optional(Type.Integer({ minimum: 0 })),
    generated_at: Type.Optional(Timestamp),
    overall: LlmStatusOverall,
    services: Type.Array(LlmStatusService),
  },
  upstream("llm-gateway", "the service status report"),
);
export type LlmStatusReport = Static<typeof LlmStatusReport>;
export const LlmStatusFrame = topicFrame(topicNamePattern("llm_status"), LlmStatusReport);
export type LlmStatusFrame = Static<typeof LlmStatusFrame>;
