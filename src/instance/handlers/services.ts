import type { Logger } from "pino";
import type { Capability, InstanceId } from "../../contract/identifiers.js";
import type { InstanceInfo } from "../../contract/peers.js";
import type { PersonAuth } from "../auth/person-auth.js";
import type { Kv } from "../kv/kv.js";
import type { LlmQuota } from "../llm/quota.js";
import type { LlmUsage } from "../llm/usage.js";
import type { Forwarder } from "../mesh/forward.js";
import type { Mesh } from "../mesh/mesh.js";
import type { Messaging } from "../messaging/engine.js";
import type { SandboxGrants } from "../sandbox/grants.js";
import type { SearchEngine } from "../search/engine.js";
import type { HarnessKind, Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import type { Transcripts } from "../transcripts/engine.js";

/** What the op handlers are handed by the composition root. */
export interface Services {
  instanceId: InstanceId;
  version: string;
  startedAt: number;
  log: Logger;
  sessions: Sessions;
  /** Which sessions run, from the harness's files; `fresh()` before acting. */
  presence: Pick<Presence, "fresh">;
  messaging: Messaging;
  hub: TopicHub;
  kv: Kv;
  capabilities: ReadonlySet<Capability>;
  /** The harness config home whose transcript tree (`projects/`, Codex's
   * `sessions/`) transcripts must be in. */
  configHome: string;
  /** The harness whose config home it is. */
  harness: HarnessKind;
  /** The instance's environment (ccmsg's config file, tools on PATH). */
  env: NodeJS.ProcessEnv;
  /** Transcript feeds and the topics they serve. */
  transcripts: Transcripts;
  /** Where `session_dump_write` writes (`<state dir>/dumps`). */
  dumpDir: string;
  /** The search index (DR-0037). */
  search: SearchEngine;
  /** Sandbox grants (DR-0042); serving once the HTTP listener is up. */
  sandbox: SandboxGrants;
  /** Spend an LLM gateway reported (DR-0043). */
  llmUsage: LlmUsage;
  /** Quota readings from rate-limit headers (DR-0043). */
  llmQuota: LlmQuota;
  /** The instance clock. */
  now(): number;
  /** Person authentication, once the HTTP listener is bound (its endpoint
   * is the passkeys' origin); undefined without one. */
  people(): PersonAuth | undefined;
  /** This instance as `InstanceInfo` (itself, reachable): `mesh.instances()[0]`. */
  self(): InstanceInfo;
  /** The mesh's links (a MeshPort, plus the handshake's and the
   * administrative frames' side; DR-0047). */
  mesh: Mesh;
  /** Carries `message_send` to the instance owning its addressee (§7.7). */
  forwarder?: Forwarder;
  clientCount(): number;
  httpAddresses(): string[];
  /** Begin a graceful stop (after the current reply is written). */
  shutdown(reason: string): void;
}
