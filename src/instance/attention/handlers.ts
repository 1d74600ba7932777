import type {
  AttentionDecider,
  AttentionReadArgs,
  AttentionReadResult,
} from "../../contract/attention.js";
import type { Identity } from "../../contract/envelope.js";
import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { MeshPort } from "../mesh/port.js";
import type { Attention } from "./engine.js";
import type { AttentionGrants } from "./grants.js";

export interface AttentionHandlerDeps {
  attention: Attention;
  grants: AttentionGrants;
  instanceId: string;
  /** The mesh, for `scope: "mesh"` reads. */
  mesh: Pick<MeshPort, "id" | "instances" | "linked" | "request">;
}

/** How long one peer's page may take before it is left out as unread. */
const PEER_READ_MS = 5000;

/**
 * attention_read, attention_decide and the person's grants (DR-0062). The
 * person reads and decides; a session only with the person's grant, and
 * never an item of its own (a session approving its own prompt is what the
 * queue must not allow: Claude Code calls it permission laundering). A
 * decision forwarded from another instance is authorised here again, with
 * this instance's copy of the grants.
 */
export function attentionHandlers(deps: AttentionHandlerDeps): Handlers {
  const { attention, grants } = deps;
  /** The caller may read and decide (other sessions') items. */
  const mayAnswer = (caller: Identity): void => {
    if (caller.role === "user") return;
    if (caller.role === "session" && grants.granted(caller.sid)) return;
    throw contractError(
      "forbidden",
      "only the person answers the attention queue, or a session they granted it (ccmsg attention grant <sid>)",
    );
  };
  return {
    async attention_read(args, { caller }) {
      mayAnswer(caller);
      const here = attention.read(args);
      if (args.scope !== "mesh") return here;
      return meshRead(deps, args, caller, here);
    },
    attention_decide(args, { caller }) {
      mayAnswer(caller);
      if (caller.role === "session" && caller.sid === args.sid)
        throw contractError(
          "forbidden",
          "a session may not answer its own prompt, granted or not: the person answers it",
        );
      const hops = (args as { hops?: unknown }).hops;
      const from = Array.isArray(hops) && typeof hops[0] === "string" ? hops[0] : deps.instanceId;
      const by: AttentionDecider = {
        role: caller.role === "session" ? "session" : "user",
        ...(caller.role === "session" ? { sid: caller.sid } : {}),
        instance: from,
        ...(args.via === undefined ? {} : { via: args.via }),
      };
      return attention.decide(args, by);
    },
    async attention_grant(args) {
      return { grant: await grants.grant(args.grantee) };
    },
    async attention_revoke(args) {
      return { revoked: await grants.revoke(args.grantee) };
    },
    attention_grants() {
      return { grants: grants.list() };
    },
  };
}

/** This instance's page and every linked peer's, each read there as the
 * caller (and authorised there); the peers that could not be read are
 * named with why. */
async function meshRead(
  deps: AttentionHandlerDeps,
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
