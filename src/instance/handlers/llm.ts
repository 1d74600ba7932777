import type { Handlers } from "../dispatch.js";
import type { Services } from "./services.js";

// `llm_stats_read` (contract §4.3.5, capability `llm_stats`, offered with a
// webhook source): spend per day, credential name and model, summed by the
// instance from what its gateways reported (DR-0043).

export function llmHandlers(s: Services): Handlers {
  return {
    async llm_stats_read({ days }) {
      return s.llmUsage.stats(days, s.now());
    },
  };
}
