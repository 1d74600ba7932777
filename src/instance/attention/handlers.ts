import type { AttentionDecider } from "../../contract/attention.js";
import type { Identity } from "../../contract/envelope.js";
import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { MeshPort } from "../mesh/port.js";
import type { Attention } from "./engine.js";
import type { AttentionGrants } from "./grants.js";
import { meshRead } from "./mesh-read.js";

export interface AttentionHandlerDeps {
  attention: Attention;
  grants: AttentionGrants;
  instanceId: string;
  /** The mesh, for `scope: "mesh"` reads. */
  mesh: Pick<MeshPort, "id" | "instances" | "linked" | "request">;
}

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
      const hops: unknown = Reflect.get(args, "hops");
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
