import type { InstanceInfo } from "../../contract/peers.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { mirrorSessions } from "./ecc-mirror.js";
import { sessionHandlers } from "./handlers.js";
import { PeersView } from "./peers-view.js";
import { type HarnessKind, Presence } from "./presence.js";
import { Sessions } from "./sessions.js";

/** What the session registry and presence are built on. */
export interface SessionsDeps {
  instanceId: string;
  store: Pick<InstanceStore, "lastLive" | "eccSessions" | "persist">;
  clock: Clock;
  hub: TopicHub;
  /** The harness whose files say which sessions run, and its config home. */
  harness: HarnessKind;
  configHome: string;
  log: Logger;
  /** The instances `peers` lists, this one first (the mesh's). */
  instances(): InstanceInfo[];
}

/** The registry (`peers`), presence from the harness's files, and ECC's
 * mirror of the sessions. */
export function registerSessions(
  deps: SessionsDeps,
): Contribution & { sessions: Sessions; presence: Presence } {
  const { instanceId, store, hub, log } = deps;
  const sessions = new Sessions(instanceId, store.lastLive, deps.clock, store.persist);
  sessions.onChange(() => hub.invalidate("peers"));
  const peers = new PeersView(sessions, deps.instances, log);
  hub.provideValueJson("peers", (_param, budget) => peers.json(budget));
  const presence = new Presence(deps.harness, deps.configHome, instanceId, sessions, hub, log);
  mirrorSessions(instanceId, sessions, store.eccSessions, store.persist);
  return { sessions, presence, handlers: sessionHandlers({ sessions }) };
}
