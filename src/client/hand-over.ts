import type { HandOverMode } from "../contract/connect.js";
import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";
import type { Client, Pushed } from "./client.js";

export type { Confirmation };

import {
  type Confirmation,
  confirmPassedOn as confirmShared,
  splitShown as splitByLedger,
} from "../harness/hook-answers.js";
import type { ShownLedger } from "../state/shown-ledger.js";

// The client side of a hand-over subscription (DR-0024): inbox messages
// arrive claimed, stay held until confirmed, and are confirmed only once they
// were passed on. Used by the hooks that put messages in front of a model.

/** Subscribe to the inbox as a hand-over subscriber; `onMessages` receives
 * every batch of claimed messages (the snapshot first, possibly empty). The
 * returned function stops listening. */
export async function subscribeHandOver(
  client: Client,
  mode: HandOverMode,
  onMessages: (messages: InboxMessage[], snapshot: boolean) => void,
): Promise<() => void> {
  const off = client.onPushed((p: Pushed) => {
    if (p.ev === "topic" && p.topic === "inbox")
      onMessages(p.data as InboxMessage[], p.snapshot === true);
  });
  try {
    await client.call("topic_subscribe", { topic: "inbox", hand_over: mode });
  } catch (error) {
    off();
    throw error;
  }
  return off;
}

/** The messages held for the connection's session, claimed (not taken):
 * the whole snapshot, however many frames it spans. */
export async function claimHeld(client: Client): Promise<InboxMessage[]> {
  const claimed: InboxMessage[] = [];
  let snapshotSeen!: () => void;
  const snapshot = new Promise<void>((r) => {
    snapshotSeen = r;
  });
  const off = await subscribeHandOver(client, "take", (messages, first) => {
    claimed.push(...messages);
    if (first) snapshotSeen();
  });
  try {
    await snapshot;
    // A large snapshot spans several frames, all queued before any later
    // reply: a round trip proves every part has arrived.
    await client.call("instance_ping");
    return claimed;
  } finally {
    off();
  }
}

/** Confirm that `messages` were passed on, ending the subscription. */
export async function confirmHandOver(
  client: Client,
  messages: readonly InboxMessage[],
): Promise<Confirmation> {
  const mids = messages.map((m) => m.mid);
  try {
    const r = await client.call("topic_unsubscribe", { topic: "inbox", handed_over: mids });
    return r.handed_over?.length === mids.length ? "recorded" : "refused";
  } catch (error) {
    return error instanceof ContractError && error.code !== "instance_unreachable"
      ? "refused"
      : "unknown";
  }
}

/** Confirm what was passed on (`fresh`) with what had been already
 * (`shown`), keeping the ledger (harness/hook-answers.ts). */
export function confirmPassedOn(
  client: Client,
  fresh: readonly InboxMessage[],
  shown: readonly InboxMessage[],
  ledger: ShownLedger,
): Promise<Confirmation> {
  return confirmShared((m) => confirmHandOver(client, m), fresh, shown, ledger);
}

/** Claimed messages split by the session's shown ledger (DR-0050). */
export async function splitShown(
  messages: readonly InboxMessage[],
  ledger: ShownLedger,
): Promise<{ fresh: InboxMessage[]; shown: InboxMessage[] }> {
  return splitByLedger(messages, await ledger.mids());
}
