import { LOCAL_LLM_SOURCE } from "../../config/llm.js";
import type { LlmEvent } from "../../gateway/event.js";
import { lazyHandlers } from "../common/lazy-ops.js";
import type { LlmInput, LlmServed } from "./served.js";

export type { LlmServed } from "./served.js";

/** The LLM ops (llm/handlers.ts), loaded with the rest at first use. */
const LLM_OPS = ["llm_usage_read", "llm_stats_read"] as const;

/**
 * The LLM side (DR-0043), loaded only when it is used. A config that names a
 * webhook source or a status page serves it from the start. Without either,
 * nothing of it is loaded until the person's own gateway on this machine
 * reports its first batch (source `local`, proven with the owner credential:
 * `ccmsg gateway` with no config at all); then the `llm_*` capabilities are
 * offered from that moment on, no restart needed. Until then its ops are
 * refused before any handler, as for a capability this instance lacks.
 */
export async function registerLlm(input: LlmInput): Promise<LlmServed> {
  const c = input.config;
  if (Object.keys(c?.sources ?? {}).length > 0 || c?.status_page !== undefined)
    return (await import("./served.js")).serveLlm(input);
  let served: LlmServed | undefined;
  let loading: Promise<LlmServed> | undefined;
  const activate = () => {
    loading ??= import("./served.js").then((m) => {
      // Its own source, whose proof the webhook route checks itself.
      const sources = { [LOCAL_LLM_SOURCE]: { token: "" } };
      served = m.serveLlm({ ...input, config: { ...c, sources } });
      return served;
    });
    return loading;
  };
  // Batches in the order they came, also while the side loads.
  let ingested = Promise.resolve();
  const ingest = (events: LlmEvent[]) => {
    ingested = ingested
      .then(async () => (await activate()).webhook.ingest(events))
      .catch((error: unknown) => input.log.warn({ err: error }, "llm batch not applied"));
  };
  return {
    handlers: lazyHandlers(LLM_OPS, async () => (await activate()).handlers),
    webhook: { sources: {}, local: true, ingest },
    expire: () => served?.expire(),
    due: () => served?.due(),
    close: () => served?.close(),
  };
}
