import type { Logger } from "pino";
import {
  ATTENTION_HOLD_DEFAULT_MS,
  ATTENTION_KEPT,
  ATTENTION_RETENTION_MS,
} from "../../contract/attention.js";
import { contractError } from "../../contract/errors.js";
import { AttentionStore } from "../../store/attention.js";
import type { CommitQueue } from "../../store/commit-queue.js";
import type { Db } from "../../store/database.js";
import type { Clock } from "../../util/clock.js";
import type { Contribution } from "../dispatch.js";
import type { TopicHub } from "../topic-hub.js";
import { Attention, type DialogState } from "./engine.js";

/** How often a held item looks at its session's dialog. */
const DIALOG_POLL_MS = 500;

export interface AttentionRegisterDeps {
  instanceId: string;
  db: Db;
  queue: CommitQueue;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
  holdMs?: number;
  pollMs?: number;
  dialog(sid: string): Promise<DialogState>;
  label(sid: string): string | undefined;
}

/** The attention queue (DR-0062): its engine, its topic and its ops. Only a
 * person reads and decides; a session is refused until the person can grant
 * one the right (never its own prompt). */
export function registerAttention(
  deps: AttentionRegisterDeps,
): Contribution & { attention: Attention } {
  const store = new AttentionStore(deps.db, deps.queue, ATTENTION_KEPT, ATTENTION_RETENTION_MS);
  const attention = new Attention({
    ...deps,
    store,
    holdMs: deps.holdMs ?? ATTENTION_HOLD_DEFAULT_MS,
    pollMs: deps.pollMs ?? DIALOG_POLL_MS,
  });
  // Items a stopped instance left pending: their hooks went with it.
  attention
    .recover()
    .catch((error: unknown) => deps.log.warn({ err: error }, "attention items not recovered"));
  deps.hub.provideSnapshot("attention", () => ({
    items: attention.read({ pending: true, limit: 200 }).items,
  }));
  const personOnly = (role: string) => {
    if (role !== "user")
      throw contractError(
        "forbidden",
        "only the person answers the attention queue: a session may not approve a prompt on its own say",
      );
  };
  return {
    attention,
    handlers: {
      attention_read(args, { caller }) {
        personOnly(caller.role);
        return attention.read(args);
      },
      attention_decide(args, { caller }) {
        personOnly(caller.role);
        return attention.decide(args, {
          role: "user",
          instance: deps.instanceId,
          ...(args.via === undefined ? {} : { via: args.via }),
        });
      },
    },
  };
}
