import type { LlmInput, LlmServed } from "./served.js";

export type { LlmServed } from "./served.js";

/**
 * The LLM side (DR-0043): loaded only when ccmsg's config names a webhook
 * source or a status page (llm/served.ts). Without either it offers no
 * capability, so its ops are refused before any handler, and a webhook
 * batch names no source it could come from: nothing of it is loaded.
 */
export async function registerLlm(input: LlmInput): Promise<LlmServed> {
  const c = input.config;
  if (Object.keys(c?.sources ?? {}).length === 0 && c?.status_page === undefined)
    return { handlers: {}, webhook: { sources: {}, ingest: () => {} }, ...IDLE };
  return (await import("./served.js")).serveLlm(input);
}

const IDLE = { expire: () => {}, due: () => {}, close: () => {} };
