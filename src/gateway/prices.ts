import type { ModelPrice } from "../config/llm.js";
import type { LlmEventUsage } from "./event.js";

// What a request cost, from its usage and a price table (USD per million
// tokens) keyed by model-name prefix; the longest matching prefix wins, so a
// family price ("claude-sonnet") is overridden by a model's own. The defaults
// are Anthropic's list prices as of late 2025; `llm.prices` in the config
// corrects or extends them.

export const DEFAULT_PRICES: Record<string, ModelPrice> = {
  // Opus 4.5 and later; the earlier Opus 4 / 4.1 cost three times as much.
  "claude-opus": { input: 5, output: 25 },
  "claude-opus-4-0": { input: 15, output: 75 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4-2025": { input: 15, output: 75 },
  "claude-3-opus": { input: 15, output: 75 },
  "claude-sonnet": { input: 3, output: 15 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-3-5-sonnet": { input: 3, output: 15 },
  "claude-haiku": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "claude-3-haiku": { input: 0.25, output: 1.25 },
};

/** The price of a model, or undefined when no prefix matches. */
export function priceOf(
  model: string | undefined,
  table: Record<string, ModelPrice> = DEFAULT_PRICES,
): ModelPrice | undefined {
  if (model === undefined) return undefined;
  let best: string | undefined;
  for (const prefix of Object.keys(table))
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length))
      best = prefix;
  return best === undefined ? undefined : table[best];
}

/** USD of one request's usage. Cache writes are priced by the lifetime the
 * request asked for (1 hour costs more than 5 minutes). */
export function costUsd(usage: LlmEventUsage, price: ModelPrice, cacheTtlSecs?: number): number {
  const write =
    cacheTtlSecs !== undefined && cacheTtlSecs > 300
      ? (price.cache_write_1h ?? price.input * 2)
      : (price.cache_write_5m ?? price.input * 1.25);
  const read = price.cache_read ?? price.input * 0.1;
  return (
    ((usage.input_tokens ?? 0) * price.input +
      (usage.output_tokens ?? 0) * price.output +
      (usage.cache_creation_input_tokens ?? 0) * write +
      (usage.cache_read_input_tokens ?? 0) * read) /
    1_000_000
  );
}
