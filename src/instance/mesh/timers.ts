// The mesh's clocks (contract §8.1; DR-0047): beats, the dead time, the
// redial backoff, and their test-only overrides.

export interface MeshTimers {
  /** A beat is sent on every link this often. */
  heartbeatMs: number;
  /** A link nothing arrived on for this long is dead. */
  deadMs: number;
  /** The shortest wait before dialing again; the longest is 12 times it. */
  backoffMs: number;
}

export const MESH_TIMERS: MeshTimers = { heartbeatMs: 20_000, deadMs: 60_000, backoffMs: 5_000 };
/** The longest redial wait, as a multiple of the shortest. */
const BACKOFF_MAX_FACTOR = 12;
/** The wait before redial number `failures` (0 first): from `base`,
 * doubling, jittered by ±25 %, kept between `base` and 12 × `base`. */
export function backoffDelay(base: number, failures: number): number {
  const max = base * BACKOFF_MAX_FACTOR;
  const step = Math.min(max, base * 2 ** Math.min(failures, 8));
  return Math.min(max, Math.max(base, step * (0.75 + Math.random() * 0.5)));
}

/** The mesh's test hooks (read only with `--test-hooks`): shorter timers, and
 * `CCMSG_TEST_MESH_DIAL` = `{"<endpoint>": "host:port"}`, where to open the
 * TCP connection for a peer's endpoint (a proxy in between). */
export function meshTestHooks(env: Record<string, string | undefined>): {
  timers: Partial<MeshTimers>;
  dial?: Record<string, string>;
} {
  const ms = (name: string) => {
    const v = Number(env[name]);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  };
  const timers: Partial<MeshTimers> = {};
  const heartbeatMs = ms("CCMSG_TEST_MESH_HEARTBEAT_MS");
  const deadMs = ms("CCMSG_TEST_MESH_DEAD_MS");
  const backoffMs = ms("CCMSG_TEST_MESH_BACKOFF_MS");
  if (heartbeatMs !== undefined) timers.heartbeatMs = heartbeatMs;
  if (deadMs !== undefined) timers.deadMs = deadMs;
  if (backoffMs !== undefined) timers.backoffMs = backoffMs;
  let dial: Record<string, string> | undefined;
  if (env.CCMSG_TEST_MESH_DIAL)
    dial = JSON.parse(env.CCMSG_TEST_MESH_DIAL) as Record<string, string>;
  return dial === undefined ? { timers } : { timers, dial };
}
