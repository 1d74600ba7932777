import {
  ATTENTION_AT_TERMINAL_DEFAULT_MS,
  ATTENTION_CODEX_HOLD_DEFAULT_MS,
  ATTENTION_HOLD_DEFAULT_MS,
  ATTENTION_KEPT,
  ATTENTION_RETENTION_MS,
} from "../../contract/attention.js";
import { AttentionStore } from "../../store/attention.js";
import type { CommitQueue } from "../../store/commit-queue.js";
import type { Db } from "../../store/database.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { Kv } from "../kv/kv.js";
import type { MeshPort } from "../mesh/port.js";
import type { TopicHub } from "../topic-hub.js";
import { Attention, type AttentionDeps, type DialogState } from "./engine.js";
import { AttentionGrants } from "./grants.js";
import { attentionHandlers } from "./handlers.js";

/** How often a held item looks at its session's dialog. */
const DIALOG_POLL_MS = 500;

export interface AttentionRegisterDeps {
  instanceId: string;
  db: Db;
  queue: CommitQueue;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
  /** KV: where the person's grants are kept (replicated mesh-wide). */
  kv: Pick<Kv, "list" | "write" | "delete">;
  mesh: Pick<MeshPort, "id" | "instances" | "linked" | "request">;
  holdMs?: number;
  codexHoldMs?: number;
  pollMs?: number;
  atTerminalMs?: number;
  dialog(sid: string): Promise<DialogState>;
  label(sid: string): string | undefined;
  messagedAt: AttentionDeps["messagedAt"];
  /** Every ended item, for the search index. */
  ended?: AttentionDeps["ended"];
}

/** The attention queue (DR-0062): its engine, its topic and its ops. */
export function registerAttention(
  deps: AttentionRegisterDeps,
): Contribution & { attention: Attention; grants: AttentionGrants } {
  const store = new AttentionStore(deps.db, deps.queue, ATTENTION_KEPT, ATTENTION_RETENTION_MS);
  const attention = new Attention({
    ...deps,
    store,
    holdMs: {
      claude: deps.holdMs ?? ATTENTION_HOLD_DEFAULT_MS,
      codex: deps.codexHoldMs ?? ATTENTION_CODEX_HOLD_DEFAULT_MS,
    },
    pollMs: deps.pollMs ?? DIALOG_POLL_MS,
    atTerminalMs: deps.atTerminalMs ?? ATTENTION_AT_TERMINAL_DEFAULT_MS,
  });
  const grants = new AttentionGrants(deps.kv, deps.clock, deps.instanceId, deps.label);
  // Items a stopped instance left pending: their hooks went with it.
  attention
    .recover()
    .catch((error: unknown) => deps.log.warn({ err: error }, "attention items not recovered"));
  deps.hub.provideSnapshot("attention", () => ({
    items: attention.read({ pending: true, limit: 200 }).items,
  }));
  return {
    attention,
    grants,
    handlers: attentionHandlers({
      attention,
      grants,
      instanceId: deps.instanceId,
      mesh: deps.mesh,
    }),
  };
}
