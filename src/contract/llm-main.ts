import { LLM_PROMPT_CACHE_TTL_MS } from "./constants.js";

/** The inputs of the `main` rule: one series' newest request. */
export interface SeriesRequest {
  sid: string;
  prefix?: string;
  origin?: string;
  received_at: number;
  cache_expires_at?: number;
}

/** The `origin` spelling that means "the session's own turn". The gateway's
 * vocabulary is open; every other stated origin is someone else's turn. */
export const MAIN_ORIGIN = "main";

/**
 * Decide `LlmRequestInfo.main` for a set of requests (contract §5.4), so every
 * client agrees which window is a session's own:
 *
 * 1. a stated `origin` decides — the gateway saw the request go out;
 * 2. otherwise a prefix seen under two or more sessions is a sub-agent's (a
 *    session's own warm series is not shared, so sharing is the evidence), and
 *    among the rest the series the session used first wins — its own
 *    conversation starts before anything it spawns;
 * 3. if every series of a session is shared, the newest is marked: it is the
 *    window a countdown is about, and marking nothing leaves no window.
 *
 * `firstUsedAt` gives when each `(sid, prefix)` series was first seen; without
 * it a series' request time stands in. Returns one verdict per input, in order.
 */
export function decideMainSeries(
  requests: readonly SeriesRequest[],
  firstUsedAt?: (sid: string, prefix: string | undefined) => number | undefined,
): boolean[] {
  const sessionsOfPrefix = new Map<string, Set<string>>();
  for (const r of requests) {
    const key = r.prefix ?? "";
    const set = sessionsOfPrefix.get(key) ?? new Set<string>();
    set.add(r.sid);
    sessionsOfPrefix.set(key, set);
  }
  const verdict = requests.map((r) =>
    r.origin !== undefined ? r.origin === MAIN_ORIGIN : undefined,
  );
  const bySid = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (verdict[i] !== undefined) return;
    const list = bySid.get(r.sid) ?? [];
    list.push(i);
    bySid.set(r.sid, list);
  });
  for (const indexes of bySid.values()) {
    const unshared = indexes.filter(
      (i) => sessionsOfPrefix.get(requests[i]!.prefix ?? "")!.size < 2,
    );
    const pool = unshared.length > 0 ? unshared : indexes;
    const rank = (i: number) => {
      const r = requests[i]!;
      return unshared.length > 0
        ? (firstUsedAt?.(r.sid, r.prefix) ?? r.received_at)
        : -r.received_at;
    };
    let best = pool[0]!;
    for (const i of pool) if (rank(i) < rank(best)) best = i;
    for (const i of indexes) verdict[i] = i === best;
  }
  return verdict as boolean[];
}

/** When one request's prompt-cache window ends: its stated expiry; else, when
 * an origin is stated, its receipt (nothing was cached); else the assumed
 * cache lifetime after receipt. */
export function cacheWindowEnd(r: SeriesRequest): number {
  if (r.cache_expires_at !== undefined) return r.cache_expires_at;
  if (r.origin !== undefined) return r.received_at;
  return r.received_at + LLM_PROMPT_CACHE_TTL_MS;
}
