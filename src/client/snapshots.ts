import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";
import type { ShownLedger } from "../state/shown-ledger.js";
import type { Client } from "./client.js";
import { claimHeld, confirmPassedOn, splitShown } from "./hand-over.js";

// Reading a topic once over a connection that has greeted (or has its
// greeting in flight: the instance holds later frames until it settles).
// Shared by the CLI and the MCP server.

const closings = new WeakMap<Client, Promise<never>>();

/** Rejects when the connection closes (one listener per connection, however
 * many reads wait on it). */
function closing(client: Client): Promise<never> {
  let p = closings.get(client);
  if (p === undefined) {
    p = new Promise<never>((_, reject) =>
      client.onClose(() =>
        reject(new ContractError("instance_unreachable", "the instance ended the connection")),
      ),
    );
    p.catch(() => {});
    closings.set(client, p);
  }
  return p;
}

/** Subscribe to `topic` and resolve with its snapshot (the first frame,
 * which follows the acknowledgement). The subscription stays. */
export async function topicSnapshot<T>(client: Client, topic: string): Promise<T> {
  let resolveSnapshot!: (data: T) => void;
  const snapshot = new Promise<T>((r) => {
    resolveSnapshot = r;
  });
  const off = client.onPushed((p) => {
    if (p.ev === "topic" && p.topic === topic && p.snapshot) resolveSnapshot(p.data as T);
  });
  try {
    await client.call("topic_subscribe", { topic });
    return await Promise.race([snapshot, closing(client)]);
  } finally {
    off();
  }
}

/**
 * Take what is held for the connection's session: claimed beside whatever
 * receives its inbox (a hook's waiter keeps receiving), then confirmed, so
 * what this returns is recorded delivered and nothing else is (DR-0024). When
 * the instance goes away before answering the confirmation, the messages are
 * returned all the same and written in the session's shown ledger; messages
 * returned that way before are confirmed, never returned twice (DR-0050).
 */
export async function takeInbox(client: Client, ledger: ShownLedger): Promise<InboxMessage[]> {
  const { fresh, shown } = await splitShown(await claimHeld(client), ledger);
  if ((await confirmPassedOn(client, fresh, shown, ledger)) === "refused")
    throw new ContractError(
      "internal_error",
      "the messages could not be recorded as delivered; they stay held, retry",
    );
  return fresh;
}
