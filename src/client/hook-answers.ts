import { type HookAnswer, promptAnswer } from "../harness/hook-answers.js";
import { ShownLedger } from "../state/shown-ledger.js";
import { connectInstance, greet } from "./connect.js";
import type { Flags } from "./flags.js";
import { claimHeld, confirmHandOver } from "./hand-over.js";
import { hookSid } from "./hook-payload.js";

// The command hooks' side of the hot hooks (`inbox --hook`, `reservations
// check --hook`, in edit-hook-answer.ts): the rules are harness/hook-answers.ts's, shared with the
// instance's http hook route (DR-0058); here is their I/O over the socket.

export type { HookAnswer };

/**
 * UserPromptSubmit (and Codex's Stop), as harness/hook-answers.ts's
 * promptAnswer says, over a connection greeted as the session. Throws when
 * the instance is away or refuses.
 */
export async function promptHookAnswer(
  flags: Flags,
  payload: Record<string, unknown>,
  confirming: () => boolean = () => true,
): Promise<HookAnswer> {
  const sid = hookSid(flags, payload);
  if (sid === undefined) return undefined;
  const client = await connectInstance(flags, { start: false });
  try {
    await greet(client, sid, {});
    const handOver = {
      claim: () => claimHeld(client),
      confirm: (messages: Parameters<typeof confirmHandOver>[1]) =>
        confirmHandOver(client, messages),
    };
    return await promptAnswer(handOver, ShownLedger.of(flags, sid), payload, confirming);
  } finally {
    client.close();
  }
}
