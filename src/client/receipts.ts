import { receiptSeen } from "../contract/receipt-states.js";
import type { Receipt } from "../contract/receipts.js";
import type { OpArgs, OpResult } from "../contract/schemas.js";
import type { Client } from "./client.js";

// Waiting for a message's receipt (DR-0054): the CLI's `--wait seen` and the
// MCP send tool's `wait`.

/** The receipts topic a caller may hold: its own sends, or a person's all. */
export function receiptsTopic(sid: string | undefined): string {
  return sid === undefined ? "receipts" : `receipts:${sid}`;
}

/**
 * Send, then wait (at most `waitMs`) until the message's receipt says seen.
 * `client` is greeted as the sender. The topic is held before the send, so the first receipt of a new mid to
 * this recipient from this sender is the message's. Resolves with the reply
 * and the last receipt heard (undefined when none came), and whether it was
 * seen in time.
 */
export async function sendAndWait(
  client: Client,
  sid: string | undefined,
  args: OpArgs<"message_send">,
  waitMs: number,
): Promise<{ result: OpResult<"message_send">; receipt?: Receipt; seen: boolean }> {
  const topic = receiptsTopic(sid);
  const from = sid ?? "user";
  const old = new Set<string>();
  let mine: string | undefined;
  let last: Receipt | undefined;
  let done: (seen: boolean) => void = () => {};
  const settled = new Promise<boolean>((r) => {
    done = r;
  });
  const off = client.onPushed((p) => {
    if (p.ev !== "topic" || p.topic !== topic) return;
    for (const r of (p.data as { receipts: Receipt[] }).receipts) {
      if (p.snapshot) old.add(r.mid);
      else if (mine === undefined && !old.has(r.mid) && r.to === args.to && r.from === from)
        mine = r.mid;
      if (r.mid !== mine) continue;
      last = r;
      if (receiptSeen(r)) done(true);
    }
  });
  client.onClose(() => done(false));
  try {
    await client.call("topic_subscribe", { topic });
    const result = await client.call("message_send", args);
    const timer = setTimeout(() => done(false), waitMs);
    const seen = await settled;
    clearTimeout(timer);
    return { result, ...(last === undefined ? {} : { receipt: last }), seen };
  } finally {
    off();
    if (!client.closed) await client.call("topic_unsubscribe", { topic }).catch(() => {});
  }
}
