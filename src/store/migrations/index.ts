import type { Migration } from "../migrate.js";
import { m0001Instance } from "./0001-instance.js";
import { m0002EccState } from "./0002-ecc-state.js";
import { m0003WorkItems } from "./0003-work-items.js";
import { m0004CheckRuns } from "./0004-check-runs.js";
import { m0005InboxHeldAge } from "./0005-inbox-held-age.js";
import { m0006SyncRuns } from "./0006-sync-runs.js";
import { m0007LlmUsage } from "./0007-llm-usage.js";
import { m0008AuthRecords } from "./0008-auth-records.js";
import { m0009KvReplication } from "./0009-kv-replication.js";
import { m0010InboxOffered } from "./0010-inbox-offered.js";
import { m0011InboxReceipts } from "./0011-inbox-receipts.js";
import { m0012Notifications } from "./0012-notifications.js";
import { m0013InboxSentAt } from "./0013-inbox-sent-at.js";
import { m0014Attention } from "./0014-attention.js";
import { m0015InboxCompact } from "./0015-inbox-compact.js";

/** Every schema step, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  m0001Instance,
  m0002EccState,
  m0003WorkItems,
  m0004CheckRuns,
  m0005InboxHeldAge,
  m0006SyncRuns,
  m0007LlmUsage,
  m0008AuthRecords,
  m0009KvReplication,
  m0010InboxOffered,
  m0011InboxReceipts,
  m0012Notifications,
  m0013InboxSentAt,
  m0014Attention,
  m0015InboxCompact,
];
