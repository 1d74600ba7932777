import type { LlmRequestInfo } from "../../contract/llm.js";
import { cacheWindowEnd, decideMainSeries } from "../../contract/llm-main.js";
import type { LlmEvent } from "../../gateway/event.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";

/** The series one request belongs to: (sid, prefix), as §5.4 keys windows. */
type SeriesKey = string;
const keyOf = (sid: string, prefix: string | undefined): SeriesKey => `${sid}\u0000${prefix ?? ""}`;

/** A request as the series table keeps it: everything but `main`, which is
 * decided over the whole set when the topic is read. */
type Held = Omit<LlmRequestInfo, "main">;

/** A bound on warm series held at once; each is one row of a frame. */
const MAX_SERIES = 2_000;
/** A session's activity is forgotten a day after its last event. */
const ACTIVITY_KEPT_MS = 86_400_000;

/** What the gateway saw of one session lately. */
interface Activity {
  at: number;
  /** Requests started and not yet ended, by prefix and receipt. */
  open: Set<string>;
}

/**
 * The `llm_requests` topic (contract §5.4): the newest request per (sid,
 * prefix) series, fed by the webhook route. A series leaves when its cache
 * window ends (`cacheWindowEnd`, the library's rule); `main` is decided by
 * the library's `decideMainSeries` each time the value is read, over the set
 * still warm, with first use taken from what this instance saw. Each event
 * also moves the session's `gateway_active_at` on its peers row.
 *
 * A failed request (status ≥ 400) refreshed no cache, so it leaves its
 * series as it was and only marks the session busy (DR-0043).
 */
export class LlmRequests {
  private readonly series = new Map<SeriesKey, Held>();
  /** When each held series was first seen; dropped with the series. */
  private readonly firstUsed = new Map<SeriesKey, number>();
  private readonly activity = new Map<string, Activity>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly instanceId: string,
    private readonly clock: Clock,
    private readonly hub: TopicHub,
    private readonly sessions: Pick<Sessions, "markGatewayActive">,
    private readonly log: Logger,
  ) {}

  /** Apply one checked batch from a webhook source. */
  ingest(events: readonly LlmEvent[]): void {
    let changed = false;
    for (const e of events) {
      if (e.sid === undefined) continue;
      const at = Math.max(e.received_at, e.completed_at ?? 0);
      this.sessions.markGatewayActive(e.sid, at);
      const act = this.activity.get(e.sid) ?? { at, open: new Set<string>() };
      act.at = Math.max(act.at, at);
      const request = `${e.prefix ?? ""}/${e.received_at}`;
      if (e.completed_at === undefined && (e.status ?? 0) < 400) act.open.add(request);
      else act.open.delete(request);
      this.activity.set(e.sid, act);
      if (e.status !== undefined && e.status >= 400) continue;
      const key = keyOf(e.sid, e.prefix);
      const held = this.series.get(key);
      // The newest request of the series wins; a later event about the same
      // request (its end, with usage) refines it.
      if (held !== undefined && held.received_at > e.received_at) continue;
      if (held === undefined && this.series.size >= MAX_SERIES) {
        this.log.warn({ max: MAX_SERIES }, "llm_requests: series table full, event dropped");
        continue;
      }
      this.series.set(key, this.infoOf(e));
      if (!this.firstUsed.has(key)) this.firstUsed.set(key, e.received_at);
      else this.firstUsed.set(key, Math.min(this.firstUsed.get(key)!, e.received_at));
      changed = true;
    }
    if (changed) this.expire();
  }

  /** The topic's value: the whole unexpired set, `main` decided over it. */
  value(): LlmRequestInfo[] {
    const now = this.clock.now();
    const warm = [...this.series.values()].filter((r) => cacheWindowEnd(r) > now);
    const main = decideMainSeries(warm, (sid, prefix) => this.firstUsed.get(keyOf(sid, prefix)));
    return warm.map((r, i) => ({ ...r, main: main[i]! }));
  }

  /** What a session's line shows: when inference last ran, whether a
   * request is open, and its main series' window. */
  sessionView(sid: string): {
    gateway_active_at?: number;
    in_flight: boolean;
    cache_expires_at?: number;
    cache_ttl_secs?: number;
  } {
    const act = this.activity.get(sid);
    const main = this.value().find((r) => r.sid === sid && r.main);
    return {
      ...(act === undefined ? {} : { gateway_active_at: act.at }),
      in_flight: (act?.open.size ?? 0) > 0,
      ...(main === undefined ? {} : { cache_expires_at: cacheWindowEnd(main) }),
      ...(main?.cache_ttl_secs === undefined ? {} : { cache_ttl_secs: main.cache_ttl_secs }),
    };
  }

  /** Drop series whose window ended, tell subscribers, and wake at the next
   * end. Also called after a test moves the instance clock. */
  expire(): void {
    if (this.closed) return;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [key, r] of this.series) {
      const end = cacheWindowEnd(r);
      if (end <= now) {
        this.series.delete(key);
        this.firstUsed.delete(key);
      } else next = Math.min(next, end);
    }
    for (const [sid, act] of this.activity)
      if (act.at + ACTIVITY_KEPT_MS <= now) this.activity.delete(sid);
    this.hub.invalidate("llm_requests");
    if (next === this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(() => {
      this.timerAt = Number.POSITIVE_INFINITY;
      this.expire();
    }, next - now);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private infoOf(e: LlmEvent): Held {
    const out: Held = { received_at: e.received_at, sid: e.sid!, instance: this.instanceId };
    if (e.prefix !== undefined) out.prefix = e.prefix;
    if (e.origin !== undefined) out.origin = e.origin;
    if (e.cache_ttl_secs !== undefined) out.cache_ttl_secs = e.cache_ttl_secs;
    if (e.cache_expires_at !== undefined) out.cache_expires_at = e.cache_expires_at;
    else if (e.cache_ttl_secs !== undefined)
      out.cache_expires_at = e.received_at + e.cache_ttl_secs * 1000;
    if (e.ns !== undefined) out.ns = e.ns;
    if (e.model !== undefined) out.model = e.model;
    if (e.credential !== undefined) out.credential = e.credential;
    if (e.status !== undefined) out.status = e.status;
    return out;
  }
}
