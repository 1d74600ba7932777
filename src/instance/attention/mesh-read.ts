import type { AttentionReadArgs, AttentionReadResult } from "../../contract/attention.js";
import type { Identity } from "../../contract/envelope.js";
import type { MeshPort } from "../mesh/port.js";

/** How long one peer's page may take before it is left out as unread. */
const PEER_READ_MS = 5000;

/** This instance's page and every linked peer's, each read there as the
 * caller (and authorised there); the peers that could not be read are
 * named with why. */
export async function meshRead(
  deps: { mesh: Pick<MeshPort, "id" | "instances" | "linked" | "request"> },
  args: AttentionReadArgs,
  caller: Identity,
  here: AttentionReadResult,
): Promise<AttentionReadResult> {
  const { scope: _s, ...rest } = args;
  const linked = deps.mesh.linked();
  const unread: { instance: string; reason: string }[] = [];
  for (const i of deps.mesh.instances()) {
    if (i.id !== undefined && i.id !== deps.mesh.id && !linked.includes(i.id))
      unread.push({ instance: i.id, reason: "no link to it now" });
  }
  const pages = await Promise.all(
    linked.map(async (peer) => {
      try {
        const reply = await deps.mesh.request(
          peer,
          {
            op: "attention_read",
            ...rest,
            from_instance: deps.mesh.id,
            hops: [deps.mesh.id],
            caller,
          },
          PEER_READ_MS,
        );
        if (reply.ok) return reply.result as AttentionReadResult;
        unread.push({ instance: peer, reason: `${reply.error.code}: ${reply.error.msg}` });
      } catch (error) {
        unread.push({ instance: peer, reason: (error as Error).message });
      }
      return undefined;
    }),
  );
  let { items, pending } = here;
  let more = here.more === true;
  for (const page of pages) {
    if (page === undefined) continue;
    items = [...items, ...page.items];
    pending += page.pending;
    more ||= page.more === true;
  }
  items.sort((a, b) => b.asked_at - a.asked_at);
  return {
    items,
    pending,
    ...(more ? { more: true as const } : {}),
    ...(unread.length > 0 ? { unread } : {}),
  };
}
