import { editAnswer, type HookAnswer, promptAnswer } from "../harness/hook-answers.js";
import { configFile } from "../state/paths.js";
import { ShownLedger } from "../state/shown-ledger.js";
import { connectInstance, greet } from "./connect.js";
import type { Flags } from "./flags.js";
import { claimHeld, confirmHandOver } from "./hand-over.js";
import { hookSid } from "./hook-payload.js";
import { openReservations, realAsFarAsExists } from "./reservations.js";

// The command hooks' side of the hot hooks (`inbox --hook`, `reservations
// check --hook`): the rules are harness/hook-answers.ts's, shared with the
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

/** PreToolUse (DR-0041), as harness/hook-answers.ts's editAnswer says, with
 * the reservations read over the socket. Throws when the instance is away
 * (the caller allows). */
export async function editHookAnswer(
  flags: Flags,
  payload: Record<string, unknown>,
  cwd: string,
): Promise<HookAnswer> {
  return editAnswer(
    {
      entries: async () => {
        const { client, live } = await openReservations(flags, false);
        client.close();
        return live;
      },
      real: async (path) => realAsFarAsExists(path),
      // The config's checker loads beside the round trip, not before it.
      blocking: () =>
        import("../config/config.js").then(
          (m) => m.loadConfig(configFile(undefined)).reservations?.on_conflict === "block",
        ),
    },
    payload,
    hookSid(flags, payload) ?? null,
    cwd,
    Date.now,
  );
}
