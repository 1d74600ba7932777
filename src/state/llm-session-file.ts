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

/** How long its main series' cache stays warm after `now`; undefined when
 * no window is known or it already ended. */
export function cacheLeftMs(s: SessionLlm, now: number): number | undefined {
  const end = s.cache_expires_at;
  return end === undefined || end <= now ? undefined : end - now;
}
