// The busy mark (a session's model is answering), one rule for the CLI, the
// statusline, the HUD and the console. Free of the schemas on purpose: the
// statusline runs on every refresh of the status bar and loads only this.

/** Within this long of its last event a session counts as busy, in flight or
 * not: a streamed answer's end is reported, but a client that drops its
 * connection leaves no end behind. */
export const BUSY_WINDOW_MS = 15_000;
/** A request still open counts this long after it was last seen, no longer:
 * past it, its end was surely lost. */
export const IN_FLIGHT_MAX_MS = 600_000;

/** What the mark is read from: a peers row (`gateway_active_at` alone), or
 * what the instance wrote for the session, which knows a request is open. */
export interface BusyFacts {
  gateway_active_at?: number;
  in_flight?: boolean;
}

/** Until when the session is busy, seen at `now`; undefined when it is not.
 * A reader that shows the mark redraws it then. */
export function busyUntil(s: BusyFacts, now: number): number | undefined {
  const at = s.gateway_active_at;
  if (at === undefined) return undefined;
  const until = at + (s.in_flight === true ? IN_FLIGHT_MAX_MS : BUSY_WINDOW_MS);
  return now < until ? until : undefined;
}

/** Whether the session is busy at `now`: an event within BUSY_WINDOW_MS, or
 * a request in flight for at most IN_FLIGHT_MAX_MS. */
export function isBusy(s: BusyFacts, now: number): boolean {
  return busyUntil(s, now) !== undefined;
}
