import type { ContractError } from "../contract/errors.js";

// The `llm` section of ccmsg's config (DR-0043): the webhook sources that may
// feed the instance LLM-gateway events, where `ccmsg gateway` listens and what
// it forwards to, and the price table spend is computed from. Checked by hand
// like the rest of the file. Tokens are secrets: no message here quotes one.

export interface LlmSourceConfig {
  /** The bearer token the source presents on `…/webhook/<source>`. */
  token: string;
}

/** USD per million tokens. Cache writes and reads default to Anthropic's
 * multipliers of the input price (5-minute write ×1.25, 1-hour write ×2,
 * read ×0.1) when not stated. */
export interface ModelPrice {
  input: number;
  output: number;
  cache_write_5m?: number;
  cache_write_1h?: number;
  cache_read?: number;
}

export interface LlmGatewayConfig {
  /** `host:port` `ccmsg gateway` listens on (default 127.0.0.1:7078). */
  listen?: string;
  /** The Messages API it forwards to (default https://api.anthropic.com). */
  upstream?: string;
  /** The webhook source it reports as (default `local`). */
  source?: string;
}

/** A provider's official status page (an Atlassian Statuspage, whose
 * `/api/v2/summary.json` the instance polls) for `llm_status`. */
export interface LlmStatusPageConfig {
  /** The page's base URL, e.g. https://status.anthropic.com. */
  url: string;
  /** Seconds between polls (default 60, at least 10). */
  interval_seconds?: number;
  /** The `llm_status` service it describes: an upstream's host as gateways
   * report it (default: llm.gateway.upstream's host, else api.anthropic.com). */
  service?: string;
}

export interface LlmConfig {
  /** By source name; the `llm_events` capability is offered when one exists. */
  sources: Record<string, LlmSourceConfig>;
  gateway?: LlmGatewayConfig;
  status_page?: LlmStatusPageConfig;
  /** By model-name prefix; the longest matching prefix prices a model. Merged
   * over the built-in table (prices.ts), so one entry can be corrected alone. */
  prices?: Record<string, ModelPrice>;
}

/** Where `ccmsg gateway` listens and forwards to unless configured. */
export const DEFAULT_GATEWAY_LISTEN = "127.0.0.1:7078";
/** The webhook source of the person's own gateway on the instance's machine:
 * with no source of that name configured, it proves itself with the owner
 * credential (DR-0043). */
export const LOCAL_LLM_SOURCE = "local";
export const DEFAULT_GATEWAY_UPSTREAM = "https://api.anthropic.com";

type Bad = (key: string, why: string) => ContractError;

/** A source name is a path segment of the webhook route. */
const SOURCE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Short tokens can be guessed; the compare is constant-time, not rate-limited. */
const TOKEN_MIN_CHARS = 16;

export function checkLlm(value: unknown, bad: Bad): LlmConfig {
  const shape =
    "must be an object {sources?: {<name>: {token}}, gateway?: {listen?, upstream?, source?}, status_page?, prices?}";
  if (!isObject(value)) throw bad("llm", shape);
  for (const k of Object.keys(value))
    if (!["sources", "gateway", "status_page", "prices"].includes(k))
      throw bad(`llm.${k}`, "unknown key");
  const out: LlmConfig = { sources: {} };
  if (value.sources !== undefined) {
    if (!isObject(value.sources)) throw bad("llm.sources", "must be an object {<name>: {token}}");
    for (const [name, s] of Object.entries(value.sources)) {
      const at = `llm.sources.${name}`;
      if (!SOURCE_NAME.test(name)) throw bad(at, "a source name is 1-64 of A-Z a-z 0-9 _ -");
      if (!isObject(s)) throw bad(at, "must be an object {token}");
      for (const k of Object.keys(s)) if (k !== "token") throw bad(`${at}.${k}`, "unknown key");
      if (typeof s.token !== "string" || s.token.length < TOKEN_MIN_CHARS || /\s/.test(s.token))
        throw bad(`${at}.token`, `must be a string of at least ${TOKEN_MIN_CHARS} non-space chars`);
      out.sources[name] = { token: s.token };
    }
  }
  if (value.gateway !== undefined) out.gateway = checkGateway(value.gateway, out.sources, bad);
  if (value.status_page !== undefined) out.status_page = checkStatusPage(value.status_page, bad);
  if (value.prices !== undefined) out.prices = checkPrices(value.prices, bad);
  return out;
}

/** Polls closer than this only load the provider's page. */
const MIN_STATUS_INTERVAL_SECONDS = 10;

function checkStatusPage(p: unknown, bad: Bad): LlmStatusPageConfig {
  const shape = "must be an object {url, interval_seconds?, service?}";
  if (!isObject(p)) throw bad("llm.status_page", shape);
  for (const k of Object.keys(p))
    if (!["url", "interval_seconds", "service"].includes(k))
      throw bad(`llm.status_page.${k}`, "unknown key");
  if (typeof p.url !== "string" || !isHttpUrl(p.url))
    throw bad("llm.status_page.url", "must be an http(s) URL (the status page's base)");
  const out: LlmStatusPageConfig = { url: p.url };
  if (p.interval_seconds !== undefined) {
    const n = p.interval_seconds;
    if (typeof n !== "number" || !Number.isInteger(n) || n < MIN_STATUS_INTERVAL_SECONDS)
      throw bad(
        "llm.status_page.interval_seconds",
        `must be an integer ≥ ${MIN_STATUS_INTERVAL_SECONDS}`,
      );
    out.interval_seconds = n;
  }
  if (p.service !== undefined) {
    if (typeof p.service !== "string" || p.service === "" || p.service.length > 256)
      throw bad("llm.status_page.service", "must be a service id (an upstream host)");
    out.service = p.service;
  }
  return out;
}

function checkGateway(
  g: unknown,
  sources: Record<string, LlmSourceConfig>,
  bad: Bad,
): LlmGatewayConfig {
  if (!isObject(g)) throw bad("llm.gateway", "must be an object {listen?, upstream?, source?}");
  for (const k of Object.keys(g))
    if (!["listen", "upstream", "source"].includes(k)) throw bad(`llm.gateway.${k}`, "unknown key");
  const out: LlmGatewayConfig = {};
  if (g.listen !== undefined) {
    if (typeof g.listen !== "string" || !/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/.test(g.listen))
      throw bad("llm.gateway.listen", "must be host:port");
    out.listen = g.listen;
  }
  if (g.upstream !== undefined) {
    if (typeof g.upstream !== "string" || !isHttpUrl(g.upstream))
      throw bad("llm.gateway.upstream", "must be an http(s) URL");
    out.upstream = g.upstream;
  }
  if (g.source !== undefined) {
    if (typeof g.source !== "string" || sources[g.source] === undefined)
      throw bad("llm.gateway.source", "must name one of llm.sources");
    out.source = g.source;
  }
  return out;
}

function checkPrices(p: unknown, bad: Bad): Record<string, ModelPrice> {
  const shape = "must be an object {<model prefix>: {input, output, cache_write_5m?, …}}";
  if (!isObject(p)) throw bad("llm.prices", shape);
  const out: Record<string, ModelPrice> = {};
  const fields = ["input", "output", "cache_write_5m", "cache_write_1h", "cache_read"] as const;
  for (const [model, price] of Object.entries(p)) {
    const at = `llm.prices.${model}`;
    if (model === "") throw bad(at, "a model prefix is not empty");
    if (!isObject(price)) throw bad(at, shape);
    for (const k of Object.keys(price))
      if (!(fields as readonly string[]).includes(k)) throw bad(`${at}.${k}`, "unknown key");
    const entry: Partial<ModelPrice> = {};
    for (const f of fields) {
      const v = price[f];
      if (v === undefined) {
        if (f === "input" || f === "output") throw bad(`${at}.${f}`, "required (USD per MTok)");
        continue;
      }
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
        throw bad(`${at}.${f}`, "must be a number ≥ 0 (USD per million tokens)");
      entry[f] = v;
    }
    out[model] = entry as ModelPrice;
  }
  return out;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.search === "" && u.hash === "";
  } catch {
    return false;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
