import type { Client } from "../client/client.js";
import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";

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
 * Take what is held for the connection's session. Subscribing is receiving
 * (contract §7.7): the snapshot leaves the inbox as it is sent, and so does
 * any message handed to this connection until the subscription ends — so the
 * subscription is ended at once and everything that arrived before that was
 * acknowledged is kept too. Nothing delivered here is dropped.
 */
export async function takeInbox(client: Client): Promise<InboxMessage[]> {
  const taken: InboxMessage[] = [];
  let snapshotSeen!: () => void;
  const snapshot = new Promise<void>((r) => {
    snapshotSeen = r;
  });
  const off = client.onPushed((p) => {
    if (p.ev !== "topic" || p.topic !== "inbox") return;
    taken.push(...(p.data as InboxMessage[]));
    if (p.snapshot) snapshotSeen();
  });
  try {
    await client.call("topic_subscribe", { topic: "inbox" });
    await Promise.race([snapshot, closing(client)]);
    // Frames and replies share one ordered queue: every message handed to
    // this subscription arrives before the acknowledgement of its end.
    await client.call("topic_unsubscribe", { topic: "inbox" }).catch((error) => {
      // A connection lost now ended the subscription as well; what was
      // taken is the caller's.
      if (!client.closed) throw error;
    });
    return taken;
  } finally {
    off();
  }
}
