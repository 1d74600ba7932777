import { harnessOf } from "../contract/peers.js";
import { type Json, obj, readRecordedInput, str } from "../harness/claude/statusline-input.js";
import { sessionIdFrom } from "../harness/identity.js";
import type { MirroredSession } from "../store/ecc-sessions.js";

// Which session a HUD or a session control is about, and where it works.

export interface Target {
  /** The session, or null when none is known. */
  sid: string | null;
  /** The session this process runs inside (harness environment), if any. */
  caller: string | null;
  /** What the instance mirrored of the session. */
  session: MirroredSession | undefined;
  /** The last statusline input the harness gave for the session. */
  statusline: Json | undefined;
  /** The session's directory; the process's own when the session's is unknown. */
  cwd: string;
  /** Whether `cwd` is the session's (not a fallback). */
  cwdKnown: boolean;
  /** "claude-code", "codex" or "unknown". */
  harness: string;
}

/** The harness session this process runs inside, from its environment alone
 * (the CLI's identity rule without `--sid`), and which harness that is. */
export function callerIdentity(
  env: NodeJS.ProcessEnv,
): { sid: string; harness: string } | undefined {
  const sid = sessionIdFrom(undefined, env);
  if (sid === undefined) return undefined;
  const codex = sid === env.CODEX_THREAD_ID || sid === env.CODEX_SESSION_ID;
  return { sid, harness: codex ? "codex" : "claude-code" };
}

/** Whether this machine knows the target session at all: the instance
 * mirrored it, the harness recorded its statusline, or it is the session
 * this process runs inside. */
export function isKnownSession(t: Target): boolean {
  return (
    t.sid !== null && (t.session !== undefined || t.statusline !== undefined || t.sid === t.caller)
  );
}

export interface SessionLookup {
  get(sid: string): MirroredSession | undefined;
  latest(): MirroredSession | undefined;
  /** Connected sessions first, then the most recently lost. */
  recent(limit: number): MirroredSession[];
}

/**
 * The target: `--sid`, else the calling session, else the most recently
 * active session the instance mirrored. Its directory is the mirrored cwd,
 * else the statusline's workspace, else this process's cwd.
 */
export function resolveTarget(
  flagSid: string | undefined,
  sessions: SessionLookup | undefined,
  statuslineDir: string,
  env: NodeJS.ProcessEnv = process.env,
  processCwd: string = process.cwd(),
): Target {
  const caller = callerIdentity(env);
  let sid: string | null = flagSid || caller?.sid || null;
  let session = sid === null ? undefined : sessions?.get(sid);
  if (sid === null) {
    session = sessions?.latest();
    sid = session?.sid ?? null;
  }
  const statusline = sid === null ? undefined : readRecordedInput(statuslineDir, sid);
  const sessionCwd =
    session?.cwd ?? str(obj(statusline?.workspace)?.current_dir) ?? str(statusline?.cwd);
  // What the instance knows (harnessOf); a recorded statusline input also only
  // comes from Claude Code; the environment names the calling session's.
  let harness: string = harnessOf(session);
  if (harness === "unknown" && statusline !== undefined) harness = "claude-code";
  else if (harness === "unknown" && caller !== undefined && caller.sid === sid)
    harness = caller.harness;
  return {
    sid,
    caller: caller?.sid ?? null,
    session,
    statusline,
    cwd: sessionCwd ?? processCwd,
    cwdKnown: sessionCwd !== undefined,
    harness,
  };
}
