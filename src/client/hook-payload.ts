import { type Flags, sessionId } from "./flags.js";

/** A non-empty string field of a hook payload, else undefined. */
export function payloadString(payload: Record<string, unknown>, key: string): string | undefined {
  const v = payload[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Whom a hook speaks for: `--sid`, else the payload's `session_id`, else the
 * environment's session (harness spec §8). */
export function hookSid(flags: Flags, payload: Record<string, unknown>): string | undefined {
  return flags.sid || payloadString(payload, "session_id") || sessionId(flags);
}
