import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { Attention } from "./engine.js";

export interface AttentionHandlerDeps {
  attention: Attention;
  instanceId: string;
}

/** attention_read, attention_decide (DR-0062). Only a person reads and
 * decides; a session is refused (never its own prompt, and another's only
 * once the person can grant that right). */
export function attentionHandlers(deps: AttentionHandlerDeps): Handlers {
  return {
    attention_read(args, { caller }) {
      personOnly(caller.role);
      return deps.attention.read(args);
    },
    attention_decide(args, { caller }) {
      personOnly(caller.role);
      return deps.attention.decide(args, {
        role: "user",
        instance: deps.instanceId,
        ...(args.via === undefined ? {} : { via: args.via }),
      });
    },
  };
}

function personOnly(role: string): void {
  if (role !== "user")
    throw contractError(
      "forbidden",
      "only the person answers the attention queue: a session may not approve a prompt on its own say",
    );
}
