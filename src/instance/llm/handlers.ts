import type { Handlers } from "../dispatch.js";
import type { LlmQuota } from "./quota.js";
import type { LlmUsage } from "./usage.js";

// The LLM gateway's ops (contract §4.3.5), offered with a webhook source:
// `llm_stats_read` (capability `llm_stats`) — spend per day, credential name
// and model, summed from what the gateways reported; `llm_usage_read`
// (`llm_usage`) — quota per credential from the rate-limit headers they saw
// (DR-0043).

/** What the LLM ops use. */
export interface LlmHandlerDeps {
  llmUsage: LlmUsage;
  llmQuota: LlmQuota;
  now(): number;
}

export function llmHandlers(s: LlmHandlerDeps): Handlers {
  return {
    async llm_stats_read({ days }) {
      return s.llmUsage.stats(days, s.now());
    },
    async llm_usage_read({ refresh }) {
      return s.llmQuota.read(refresh === true, s.now());
    },
  };
}
