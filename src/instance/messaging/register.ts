import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { Forwarder } from "../mesh/forward.js";
import type { HarnessKind } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { directSetup } from "./direct-route.js";
import { Messaging, type MessagingObserver } from "./engine.js";
import { messagingHandlers } from "./handlers.js";
import type { EvidenceSource } from "./receipts.js";

/** What messaging is built on. */
export interface MessagingRegisterDeps {
  instanceId: string;
  sessions: Sessions;
  store: Pick<InstanceStore, "inbox" | "notifications">;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
  /** Route (a) reaches this harness's messaging sockets (DR-0050). */
  harness: HarnessKind;
  configHome: string;
  env: NodeJS.ProcessEnv;
  /** Told of every message and notification (the search index). */
  observer: MessagingObserver;
  /** Candidates on other instances (DR-0048). */
  forwarder: Pick<Forwarder, "candidates">;
  /** What transcripts say the model saw (the search index, DR-0054). */
  evidence?: EvidenceSource;
}

/** Messages, notifications and `say` (contract §7): the engine, its inbox
 * topic and its ops. */
export function registerMessaging(
  deps: MessagingRegisterDeps,
): Contribution & { messaging: Messaging } {
  const { sessions, forwarder, log } = deps;
  const messaging = new Messaging({
    ...{ instanceId: deps.instanceId, sessions, inbox: deps.store.inbox, hub: deps.hub },
    notifications: deps.store.notifications,
    ...{ clock: deps.clock, log, observer: deps.observer, evidence: deps.evidence },
    direct: directSetup(deps.env, deps.harness, deps.configHome, log),
    elsewhere: (row, local) => forwarder.candidates(row.repo_root ?? row.cwd, row.sid, local),
  });
  const notifications = deps.store.notifications;
  return {
    messaging,
    handlers: messagingHandlers({ messaging, notifications, clock: deps.clock }),
  };
}
