import { type MeshConfig, readPeersFile } from "../../config/mesh.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { Kv } from "../kv/kv.js";
import type { Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { meshAdminHandlers } from "./admin-handlers.js";
import { Forwarder } from "./forward.js";
import { KvReplication } from "./kv-replication.js";
import { Mesh } from "./mesh.js";
import { OwnerIndex } from "./owners.js";
import { MeshRelay } from "./relay.js";
import { meshTestHooks } from "./timers.js";

/** What the mesh is built on. */
export interface MeshDeps {
  instanceId: string;
  /** The config's `mesh` section and `<state dir>/mesh.json`, both checked
   * now (a damaged one fails startup). */
  config: MeshConfig | undefined;
  peersFile: string;
  sessions: Sessions;
  /** Who runs, read from the harness's files before a message's owner is
   * decided (DR-0025). */
  presence: Pick<Presence, "fresh">;
  hub: TopicHub;
  /** KV replicated over the links (DR-0049), unless the team store already
   * shares it (then undefined). */
  kv?: { kv: Kv; store: Pick<InstanceStore, "kv" | "queue"> };
  clock: Clock;
  log: Logger;
  /** Test hooks on: the mesh reads its `CCMSG_TEST_MESH_*` overrides. */
  testEnv?: NodeJS.ProcessEnv;
}

/** What the mesh adds (DR-0047–0049). */
export interface MeshServed extends Contribution {
  mesh: Mesh;
  /** Stage 6 of dispatch and `message_send`'s first step. */
  forwarder: Forwarder;
  kvReplication?: KvReplication;
  /** The relay of peers' topics; built once every topic is registered, as it
   * passes on only what this build serves. */
  relay(): MeshRelay;
}

export function registerMesh(deps: MeshDeps): MeshServed {
  const { instanceId: id, hub, clock, log } = deps;
  const mesh = new Mesh({
    ...{ id, log, configRows: deps.config?.endpoints ?? [], peersFile: deps.peersFile },
    fileRows: readPeersFile(deps.peersFile),
    ...(deps.testEnv === undefined ? {} : meshTestHooks(deps.testEnv)),
    // A link coming or going shows in `peers` (reachable) at once.
    changed: () => hub.invalidate("peers"),
  });
  const owners = new OwnerIndex();
  const forwarder = new Forwarder(mesh, owners, {
    localState: (sid) => deps.sessions.lookup(sid)?.kind,
    connected: (sid) => deps.sessions.connected(sid),
    fresh: () => deps.presence.fresh(),
  });
  // Inert without peers but for the purge of old tombstones.
  const replicated = deps.kv;
  const kvReplication =
    replicated === undefined
      ? undefined
      : new KvReplication({
          ...{ port: mesh, kv: replicated.kv, store: replicated.store.kv },
          commit: (write) => replicated.store.queue.run(write),
          ...{ clock, log },
        });
  return {
    mesh,
    forwarder,
    kvReplication,
    relay: () => new MeshRelay(mesh, hub, owners, clock, log),
    handlers: {},
    admin: meshAdminHandlers({ mesh }),
  };
}
