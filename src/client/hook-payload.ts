import { payloadString } from "../harness/hook-answers.js";
import { type Flags, sessionId } from "./flags.js";

export { payloadString };

/** Whom a hook speaks for: `--sid`, else the payload's `session_id`, else the
 * environment's session (harness spec §8). */
export function hookSid(flags: Flags, payload: Record<string, unknown>): string | undefined {
  return flags.sid || payloadString(payload, "session_id") || sessionId(flags);
}

/** Codex runs its hooks without the thread's variables (codex-cli 0.169.0
 * gives them CODEX_HOME only): a hook command given `--harness codex` is the
 * payload's thread, which decides the instance it speaks to (harness spec §8:
 * the harness that claims the process decides). */
export function claimForHarness(
  harness: string | undefined,
  payload: Record<string, unknown>,
): void {
  if (harness !== "codex" || process.env.CODEX_THREAD_ID || process.env.CODEX_SESSION_ID) return;
  const thread = payloadString(payload, "session_id");
  if (thread !== undefined) process.env.CODEX_THREAD_ID = thread;
}
