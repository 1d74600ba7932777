import { editAnswer } from "../harness/edit-answer.js";
import type { HookAnswer } from "../harness/hook-answers.js";
import { configFile } from "../state/paths.js";
import type { Flags } from "./flags.js";
import { hookSid } from "./hook-payload.js";
import { openReservations, realAsFarAsExists } from "./reservations.js";

// `reservations check --hook`'s I/O over the socket; the rules are
// harness/edit-answer.ts's, shared with the http hook route (DR-0058).

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
