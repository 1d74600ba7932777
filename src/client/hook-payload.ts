import { payloadString } from "../harness/hook-answers.js";
import { type Flags, sessionId } from "./flags.js";

export { payloadString };

/** Whom a hook speaks for: `--sid`, else the payload's `session_id`, else the
 * environment's session (harness spec §8). */
export function hookSid(flags: Flags, payload: Record<string, unknown>): string | undefined {
  return flags.sid || payloadString(payload, "session_id") || sessionId(flags);
}
