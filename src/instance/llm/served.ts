import { DEFAULT_GATEWAY_UPSTREAM, type LlmConfig } from "../../config/llm.js";
import type { Capability } from "../../contract/identifiers.js";
import type { LlmEvent } from "../../gateway/event.js";
import { LlmUsageStore } from "../../store/llm-usage.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { Sessions } from "../sessions/sessions.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { llmHandlers } from "./handlers.js";
import { LlmQuota } from "./quota.js";
import { LlmRequests } from "./requests.js";
import { SessionFiles } from "./session-files.js";
import { LlmStatus } from "./status.js";
import { StatusPagePoller } from "./status-page.js";
import { LlmUsage } from "./usage.js";
import type { WebhookDeps } from "./webhook.js";

export interface LlmServed extends Contribution {
  /** The webhook route's sources and where its batches go. */
  webhook: WebhookDeps;
  /** Re-check the requests' expiry (a test moved the clock). */
  expire(): void;
  /** Poll the status page if its next poll is due (a test moved the clock). */
  due(): void;
  close(): void;
}

export interface LlmInput {
  id: string;
  clock: Clock;
  hub: TopicHub;
  sessions: Sessions;
  store: Pick<InstanceStore, "db" | "persist">;
  config: LlmConfig | undefined;
  stateDir: string;
  capabilities: Set<Capability>;
  log: Logger;
}

/**
 * The LLM gateway's side of the instance (DR-0043), when configured: with a
 * webhook source configured, `llm_events`, `llm_stats`, `llm_usage` and
 * `llm_status` are offered and their topics served; each checked batch feeds
 * the series table (and `gateway_active_at`), the observed service health,
 * the spend sums, the quota readings and the sessions' statusline files.
 * A configured status page alone offers `llm_status` too, and is polled.
 */
export function serveLlm(input: LlmInput): LlmServed {
  const { id, clock, hub, sessions, store, log } = input;
  const sources = input.config?.sources ?? {};
  const requests = new LlmRequests(id, clock, hub, sessions, log);
  const usage = new LlmUsage(new LlmUsageStore(store.db), input.config?.prices, store.persist);
  const quota = new LlmQuota();
  const status = new LlmStatus(clock, hub);
  const files = new SessionFiles(
    input.stateDir,
    (sid) => {
      const spent = usage.session(sid);
      return {
        sid,
        ...requests.sessionView(sid),
        requests: spent.requests,
        tokens: {
          input: spent.input_tokens,
          output: spent.output_tokens,
          cache_creation: spent.cache_creation_input_tokens,
          cache_read: spent.cache_read_input_tokens,
        },
        ...(spent.usd === null ? {} : { usd: spent.usd }),
        written_at: clock.now(),
      };
    },
    log,
  );
  if (Object.keys(sources).length > 0) {
    input.capabilities.add("llm_events");
    input.capabilities.add("llm_stats");
    input.capabilities.add("llm_usage");
    hub.provideValue("llm_requests", () => requests.value());
  }
  const page = input.config?.status_page;
  if (Object.keys(sources).length > 0 || page !== undefined) {
    input.capabilities.add("llm_status");
    hub.provideValue("llm_status", () => status.value());
  }
  const poller =
    page === undefined
      ? undefined
      : new StatusPagePoller(page, clock, (reading) =>
          status.setOfficial(page.service ?? defaultService(input.config), reading),
        );
  poller?.start();
  const ingest = (events: LlmEvent[]) => {
    requests.ingest(events);
    status.add(events);
    for (const e of events) {
      usage.add(e);
      quota.add(e);
      if (e.sid !== undefined) files.touched(e.sid);
    }
  };
  return {
    expire: () => requests.expire(),
    webhook: { sources, ingest },
    handlers: llmHandlers({ llmUsage: usage, llmQuota: quota, now: () => clock.now() }),
    due: () => poller?.due(),
    close: () => {
      poller?.close();
      requests.close();
      status.close();
      files.close();
    },
  };
}

/** The service a status page describes unless the config names one: what
 * `ccmsg gateway` reports as its upstream (the host it forwards to). */
function defaultService(config: LlmConfig | undefined): string {
  return new URL(config?.gateway?.upstream ?? DEFAULT_GATEWAY_UPSTREAM).host;
}
