import { readFileSync } from "node:fs";
import { join } from "node:path";

// What a gateway saw of one session, as the instance writes it for the
// statusline and the HUD (`<state dir>/llm-sessions/<sid>.json`, 0600): a
// small file they read without a connection or SQLite (the statusline runs
// on every refresh of the status bar). Derived: the instance rewrites it from
// its own facts (llm_requests, llm_usage) as events arrive.

export interface SessionLlm {
  sid: string;
  /** When inference last ran for it (its peers row's `gateway_active_at`). */
  gateway_active_at?: number;
  /** A request started and has not ended (as of `written_at`). */
  in_flight: boolean;
  /** The end of its main series' prompt-cache window, if one is warm. */
  cache_expires_at?: number;
  cache_ttl_secs?: number;
  /** Totals over every request the gateway reported for it. */
  requests: number;
  tokens: { input: number; output: number; cache_creation: number; cache_read: number };
  /** Absent while no request had a known price. */
  usd?: number;
  written_at: number;
}

/** Within this long of its last event a session counts as busy, in flight or
 * not: a streamed answer's end is reported, but a client that drops its
 * connection leaves no end behind. */
export const BUSY_WINDOW_MS = 15_000;

export function sessionLlmDir(stateDir: string): string {
  return join(stateDir, "llm-sessions");
}

/** The session's file, or undefined when there is none (no gateway saw it)
 * or it cannot be read. */
export function readSessionLlm(stateDir: string, sid: string): SessionLlm | undefined {
  try {
    const value = JSON.parse(
      readFileSync(join(sessionLlmDir(stateDir), `${sid}.json`), "utf8"),
    ) as SessionLlm;
    return value.sid === sid ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the session is busy at `now`: a request in flight (for at most
 * ten minutes after it was last seen), or an event within BUSY_WINDOW_MS. */
export function isBusy(s: SessionLlm, now: number): boolean {
  const at = s.gateway_active_at;
  if (at === undefined) return false;
  return (s.in_flight && now - at < 600_000) || now - at < BUSY_WINDOW_MS;
}

/** How long its main series' cache stays warm after `now`; undefined when
 * no window is known or it already ended. */
export function cacheLeftMs(s: SessionLlm, now: number): number | undefined {
  const end = s.cache_expires_at;
  return end === undefined || end <= now ? undefined : end - now;
}
