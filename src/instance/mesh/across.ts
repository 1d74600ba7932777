import type { Logger } from "pino";
import type { Clock } from "../../util/clock.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import { Forwarder } from "./forward.js";
import { OwnerIndex } from "./owners.js";
import type { MeshPort } from "./port.js";
import { MeshRelay } from "./relay.js";

/** What works across instances (DR-0048), built on the port. */
export interface Across {
  forwarder: Forwarder;
  relay: MeshRelay;
}

/**
 * Wire forwarding and the relay onto a mesh port: the owner index fed by the
 * relay, and what stage 6 of dispatch (`Dispatcher.forwardWith`) and
 * `message_send`'s first step ask. Call once every engine has registered
 * the topics it serves.
 */
export function workAcross(deps: {
  mesh: MeshPort;
  hub: TopicHub;
  sessions: Sessions;
  clock: Clock;
  log: Logger;
}): Across {
  const owners = new OwnerIndex();
  const forwarder = new Forwarder(deps.mesh, owners, {
    localState: (sid) => deps.sessions.lookup(sid)?.kind,
  });
  const relay = new MeshRelay(deps.mesh, deps.hub, owners, deps.clock, deps.log);
  return { forwarder, relay };
}
