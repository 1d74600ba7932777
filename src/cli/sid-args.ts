import { connectInstance, greet } from "../client/connect.js";
import type { Flags } from "../client/flags.js";
import { peersAcross } from "../client/peers-across.js";
import type { KnownSession } from "../client/sid-refusal.js";
import { knownSessions, type Prefer, resolveSid, wholeSid } from "../client/sid-resolve.js";

// A session named on the command line (an argument, `--sid`, `--to`,
// `--about`), as its sid: the rules are client/sid-resolve.ts's.

/** What the instance listed, read at most once per command: a CLI process
 * runs one command, and its sessions are read when it starts. */
let known: Promise<KnownSession[]> | undefined;

/**
 * The sid `typed` names. A whole sid costs nothing; anything else is looked
 * up in the sessions the instance lists (live and lately lost, across the
 * mesh), read as the person over a connection of its own, once. `what` names
 * the argument in the refusal ("the recipient").
 */
export async function sidArg(
  flags: Flags,
  typed: string,
  what: string,
  prefer?: Prefer,
): Promise<string> {
  const whole = wholeSid(typed);
  if (whole !== undefined) return whole;
  known ??= readKnown(flags);
  return resolveSid(typed, await known, what, prefer);
}

async function readKnown(flags: Flags): Promise<KnownSession[]> {
  const client = await connectInstance(flags);
  try {
    await greet(client, undefined);
    return knownSessions(await peersAcross(client));
  } finally {
    client.close();
  }
}
