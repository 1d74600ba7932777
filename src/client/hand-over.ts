import type { HandOverMode } from "../contract/connect.js";
import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";
import type { Client, Pushed } from "./client.js";
import type { ShownLedger } from "./shown-ledger.js";

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

/** How a confirmation ended: every message recorded delivered (it is all or
 * none), none recorded (they are held again), or no answer came — the
 * instance went away, before or after recording them. */
export type Confirmation = "recorded" | "refused" | "unknown";

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

/**
 * Claimed messages split by the session's shown ledger: `fresh` ones are to
 * be passed on; `shown` ones were passed on before a crash left their
 * confirmation unanswered, and are only confirmed again (DR-0050).
 */
export function splitShown(
  messages: readonly InboxMessage[],
  ledger: ShownLedger,
): { fresh: InboxMessage[]; shown: InboxMessage[] } {
  const known = ledger.mids();
  const fresh: InboxMessage[] = [];
  const shown: InboxMessage[] = [];
  for (const m of messages) (known.has(m.mid) ? shown : fresh).push(m);
  return { fresh, shown };
}

/** Confirm what was passed on (`fresh`) with what had been already
 * (`shown`), and keep the ledger: an unanswered confirmation writes the fresh
 * mids down, a recorded one forgets the shown ones. */
export async function confirmPassedOn(
  client: Client,
  fresh: readonly InboxMessage[],
  shown: readonly InboxMessage[],
  ledger: ShownLedger,
): Promise<Confirmation> {
  const outcome = await confirmHandOver(client, [...shown, ...fresh]);
  if (outcome === "recorded") ledger.remove(shown.map((m) => m.mid));
  if (outcome === "unknown") ledger.add(fresh.map((m) => m.mid));
  return outcome;
}
