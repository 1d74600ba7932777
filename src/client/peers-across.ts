import { foldTopicFrame, type PerInstance } from "../contract/fold.js";
import type { PeersData } from "../contract/peers.js";
import type { Client } from "./client.js";

// Apart from snapshots.ts: the fold loads the contract's topic table, which
// the hooks that take the inbox have no use for.

/**
 * The `peers` value of every instance this one relays (its own and each mesh
 * peer's), folded: subscribed, then let go. The peers' frames follow the
 * snapshot at once, in the connection's one ordered queue, so every one has
 * arrived when the unsubscription is answered.
 */
export async function peersAcross(client: Client): Promise<PerInstance<PeersData>> {
  let held: PerInstance<PeersData> = {};
  const off = client.onPushed((p) => {
    if (p.ev === "topic" && p.topic === "peers" && p.instance !== undefined)
      held = foldTopicFrame(held, {
        topic: "peers",
        instance: p.instance,
        data: p.data,
      }) as typeof held;
  });
  try {
    await client.call("topic_subscribe", { topic: "peers" });
    await client.call("topic_unsubscribe", { topic: "peers" });
    return held;
  } finally {
    off();
  }
}
