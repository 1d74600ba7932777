import { type LastLiveSession, lostStateOf, SESSION_META_KEYS } from "../../contract/peers.js";
import type { EccSessionsStore, MirroredSession } from "../../store/ecc-sessions.js";
import type { LiveSession, Sessions, StopOutcome } from "./sessions.js";

/**
 * Mirror the instance's sessions into ECC's `sessions` table (DR-0008): a row
 * when a session connects and when it is lost, so `ccmsg status`, the HUD and
 * ECC's tools read the same sessions without asking the instance. Writes go
 * through `persist` (the group commit), never the event loop's busy wait.
 */
export function mirrorSessions(
  instance: string,
  sessions: Sessions,
  store: EccSessionsStore,
  persist: (write: () => void) => void,
): void {
  sessions.onLifecycle((s) =>
    persist(() => store.put(mirrorOf(instance, s, sessions.outcomeOf(s.sid)))),
  );
}

/** A session as ECC's `sessions` table holds it. A lost session that ended on
 * purpose carries ECC's outcome (`stopped` by a person, `completed` by
 * itself) rather than the wire's `paused` (DR-0029). */
function mirrorOf(
  instance: string,
  s: LiveSession | LastLiveSession,
  outcome: StopOutcome | undefined,
): MirroredSession {
  const live = "connections" in s;
  const meta = live ? s.meta : s;
  const out: MirroredSession = {
    sid: s.sid,
    instance,
    state: live ? "active" : (outcome ?? lostStateOf(s)),
    connected_at: s.connected_at,
  };
  for (const key of SESSION_META_KEYS) {
    const value = meta[key];
    if (typeof value === "string" && value !== "") out[key] = value;
  }
  if (!live) {
    out.last_seen_at = s.last_seen_at;
    if (s.stopped_at !== undefined) out.stopped_at = s.stopped_at;
  }
  return out;
}
