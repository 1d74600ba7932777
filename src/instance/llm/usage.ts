import type { ModelPrice } from "../../config/llm.js";
import type { LlmStatsDay, LlmStatsModelUsage, LlmStatsReadResult } from "../../contract/llm.js";
import type { LlmEvent } from "../../gateway/event.js";
import { costUsd, DEFAULT_PRICES, priceOf } from "../../gateway/prices.js";
import type { LlmUsageStore, UsageSums } from "../../store/llm-usage.js";

/** `YYYY-MM-DD` of an instant in this machine's time zone (the day the
 * spend is counted under: contract §4.3.5 keys days in the gateway's zone,
 * and here the instance sums what its gateways report). */
export function localDay(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/**
 * Spend from gateway events (DR-0043): each event that carries `usage` is one
 * finished request, priced by the config's table over the defaults and added
 * to the llm_usage sums through the group commit. Per-session totals are
 * kept in memory too (seeded from the table on a session's first event), for
 * the statusline's file.
 */
export class LlmUsage {
  private readonly totals = new Map<string, UsageSums>();
  private readonly prices: Record<string, ModelPrice>;

  constructor(
    private readonly store: LlmUsageStore,
    prices: Record<string, ModelPrice> | undefined,
    private readonly persist: (write: () => void) => void,
  ) {
    this.prices = { ...DEFAULT_PRICES, ...prices };
  }

  add(e: LlmEvent): void {
    if (e.usage === undefined) return;
    const price = priceOf(e.model, this.prices);
    const usd = price === undefined ? undefined : costUsd(e.usage, price, e.cache_ttl_secs);
    const row = {
      day: localDay(e.received_at),
      sid: e.sid ?? "",
      credential: e.credential ?? "",
      model: e.model ?? "",
      input_tokens: e.usage.input_tokens ?? 0,
      output_tokens: e.usage.output_tokens ?? 0,
      cache_creation_input_tokens: e.usage.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: e.usage.cache_read_input_tokens ?? 0,
      usd,
    };
    if (e.sid !== undefined) {
      const t = this.session(e.sid);
      t.requests++;
      t.input_tokens += row.input_tokens;
      t.output_tokens += row.output_tokens;
      t.cache_creation_input_tokens += row.cache_creation_input_tokens;
      t.cache_read_input_tokens += row.cache_read_input_tokens;
      if (usd !== undefined) t.usd = (t.usd ?? 0) + usd;
    }
    this.persist(() => this.store.add(row));
  }

  /** What a session spent so far. */
  session(sid: string): UsageSums {
    let t = this.totals.get(sid);
    if (t === undefined) {
      t = { ...this.store.ofSession(sid) };
      this.totals.set(sid, t);
    }
    return t;
  }

  /** `llm_stats_read`: the last `days` days (today included), by day,
   * credential name and model. */
  stats(days: number | undefined, now: number): LlmStatsReadResult {
    const from = days === undefined ? "0000-00-00" : localDay(now - (days - 1) * 86_400_000);
    const out: Record<string, LlmStatsDay> = {};
    for (const r of this.store.since(from)) {
      const day = out[r.day] ?? { credentials: {} };
      out[r.day] = day;
      const usage: LlmStatsModelUsage = {
        requests: r.requests,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cache_creation_input_tokens: r.cache_creation_input_tokens,
        cache_read_input_tokens: r.cache_read_input_tokens,
      };
      if (r.usd !== null) {
        usage.usd = r.usd;
        day.total_usd = (day.total_usd ?? 0) + r.usd;
      }
      const credential = r.credential || "unknown";
      const models = day.credentials[credential] ?? {};
      models[r.model || "unknown"] = usage;
      day.credentials[credential] = models;
    }
    return { generated_at: now, days: out };
  }
}
