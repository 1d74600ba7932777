import type { Logger } from "pino";
import { MutationRunner } from "../board/runner.js";
import type { TeamBoard } from "../board/team-board.js";
import { type CcmsgConfig, loadConfig } from "../config/config.js";
import { MeshConfigError, readPeersFile } from "../config/mesh.js";
import type { Capability } from "../contract/identifiers.js";
import { tmuxInstalled } from "../harness/tmux.js";
import { configFile, stateFiles } from "../state/paths.js";
import { VERSION } from "../util/version.js";
import { adminHandlers, authHandlers } from "./auth/handlers.js";
import type { PersonAuth } from "./auth/person-auth.js";
import { BoardSyncScheduler } from "./board/board-sync.js";
import {
  serveTeamWorkItems,
  serveWorkItems,
  type WorkItemsTopic,
} from "./board/work-items-topic.js";
import type { Clock } from "./clock.js";
import { Dispatcher, type Handlers } from "./dispatch.js";
import { fileHandlers } from "./files/handlers.js";
import type { SurfaceDeps } from "./files/session-surfaces.js";
import type { Services } from "./handlers/services.js";
import { controlHandlers } from "./kv/handlers.js";
import { fileKv, Kv } from "./kv/kv.js";
import { ReservationSweeper } from "./kv/reservation-sweeper.js";
import { launcherHandlers } from "./launcher/handlers.js";
import { llmHandlers } from "./llm/handlers.js";
import { type LlmServed, serveLlm } from "./llm/serve.js";
import type { WebhookDeps } from "./llm/webhook.js";
import { type Across, workAcross } from "./mesh/across.js";
import { meshAdminHandlers } from "./mesh/admin-handlers.js";
import { KvReplication } from "./mesh/kv-replication.js";
import { Mesh } from "./mesh/mesh.js";
import { meshTestHooks } from "./mesh/timers.js";
import { directSetup } from "./messaging/direct-route.js";
import { Messaging } from "./messaging/engine.js";
import { messagingHandlers } from "./messaging/handlers.js";
import { SandboxGrants } from "./sandbox/grants.js";
import { sandboxHandlers } from "./sandbox/handlers.js";
import { SearchEngine } from "./search/engine.js";
import { sessionControlHandlers } from "./session-control/handlers.js";
import { connectHandlers } from "./sessions/connect-handlers.js";
import { mirrorSessions } from "./sessions/ecc-mirror.js";
import { PeersView } from "./sessions/peers-view.js";
import { type HarnessKind, Presence } from "./sessions/presence.js";
import { Sessions } from "./sessions/sessions.js";
import type { InstanceStore } from "./store/instance-store.js";
import { TopicHub } from "./topic-hub.js";
import { serveTranscripts, type Transcripts } from "./transcripts/engine.js";
import { forkOriginHandlers } from "./transcripts/fork-origin-handlers.js";
import { transcriptHandlers } from "./transcripts/handlers.js";
import { transcriptItemsHandlers } from "./transcripts/item-handlers.js";
import { serveSessionStatus } from "./transcripts/status.js";
import type { Connection, InboundHandler } from "./wire/connection.js";

/** What the HTTP listener needs for the sandbox origins: the grants, the
 * surfaces each request is checked against, and how to offer `sandbox` once
 * the listener is bound where a browser reaches `*.sandbox.localhost`. */
export interface SandboxSide {
  grants: SandboxGrants;
  surfaces: SurfaceDeps;
  offer(port: number): void;
}

/** What the engines are handed from outside. */
export interface EngineInputs {
  id: string;
  startedAt: number;
  clock: Clock;
  store: InstanceStore;
  log: Logger;
  /** The harness config home whose `projects/` tree transcripts must be in,
   * and whose files say which sessions run. */
  configHome: string;
  harness: HarnessKind;
  /** The instance's state directory (dumps are written below it). */
  stateDir: string;
  /** The instance's environment (ccmsg's config file, the harness it serves). */
  env: NodeJS.ProcessEnv;
  /** The board in PostgreSQL, shared with other instances (DR-0046), opened
   * by the caller; the instance closes it when it stops. Without it the board
   * is the instance's own file. */
  team?: TeamBoard;
  httpAddresses(): string[];
  shutdown(reason: string): void;
  /** Person authentication, once HTTP is bound. */
  people(): PersonAuth | undefined;
  /** Test hooks on: the mesh reads its `CCMSG_TEST_MESH_*` overrides. */
  testHooks?: boolean;
}

export interface Engines {
  hub: TopicHub;
  sessions: Sessions;
  messaging: Messaging;
  presence: Presence;
  board: WorkItemsTopic;
  transcripts: Transcripts;
  search: SearchEngine;
  reservations: ReservationSweeper;
  /** The sandbox's side of the HTTP listener (DR-0042). */
  sandbox: SandboxSide;
  /** `llm_requests`, spend and the webhook route that feeds them. */
  llm: LlmServed;
  /** The webhook route's sources (ccmsg's config, read once at start) and
   * where its batches go. */
  webhook: WebhookDeps;
  /** Re-check what time makes expire (a test moved the clock). */
  expire(): void;
  runner: MutationRunner;
  /** The shared board, if any (closed on stop). */
  teamBoard?: TeamBoard;
  /** The board's interval syncs (started once the socket listens). */
  boardSync: Pick<BoardSyncScheduler, "start" | "dispose">;
  dispatcher: Dispatcher;
  /** Every open connection. */
  connections: Set<Connection>;
  /** ccmsg's config as read at start. */
  config: CcmsgConfig;
  /** The mesh's links (started once HTTP is bound; DR-0047). */
  mesh: Mesh;
  /** KV replication over those links (DR-0049). */
  kvReplication?: KvReplication;
  /** What every accepted connection reads through: mesh handshakes and link
   * frames first, then dispatch. */
  inbound: InboundHandler;
  /** Forwarding and the relay over the mesh (DR-0048). */
  across: Across;
}

/**
 * The engines, each handed what it needs: the topic hub first (engines
 * register the topics they serve), then sessions, messaging, KV and the board,
 * then the handler table and the dispatcher over it.
 */
export function buildEngines(input: EngineInputs): Engines {
  const { id, clock, store, log } = input;
  const hub = new TopicHub(id, log);
  const sessions = new Sessions(id, store.lastLive, clock, store.persist);
  sessions.onChange(() => hub.invalidate("peers"));
  const peers = new PeersView(sessions, () => mesh.instances(), log);
  hub.provideValueJson("peers", (_param, budget) => peers.json(budget));
  const presence = new Presence(input.harness, input.configHome, id, sessions, hub, log);
  mirrorSessions(id, sessions, store.eccSessions, store.persist);
  const direct = directSetup(input.env, input.harness, input.configHome, log);
  const messaging = new Messaging(id, sessions, store.inbox, hub, clock, log, direct);
  // KV in the team store when the board is there (DR-0046), else the file.
  const kv = new Kv(
    input.team?.kv ?? fileKv(store.kv, (write) => store.queue.run(write)),
    hub,
    clock,
  );
  // File reservations (DR-0041) are KV entries; this only sweeps expired ones.
  const reservations = new ReservationSweeper(kv, clock, log);
  input.team?.logTo(log);
  const board =
    input.team === undefined ? serveWorkItems(store.db, hub) : serveTeamWorkItems(input.team, hub);
  const transcripts = serveTranscripts({
    instanceId: id,
    harness: input.harness,
    home: input.configHome,
    sessions,
    hub,
    log,
  });
  serveSessionStatus({ instanceId: id, hub, sessions, feeds: transcripts.feeds, log });
  // Search across sessions (DR-0037): its own file and threads.
  const files = stateFiles(input.stateDir);
  const search = new SearchEngine({
    ...{ index: files.search, store: files.database, harness: input.harness },
    ...{ home: input.configHome, log },
    // Test hook: the index's disk is "full" from the start.
    ...(input.testHooks && input.env.CCMSG_TEST_SEARCH_INDEX_FULL === "1"
      ? { maxPageCount: 1 }
      : {}),
  });
  messaging.observe(search);
  // `terminal`: session_rename types into tmux panes (DR-0031).
  const capabilities = new Set<Capability>(tmuxInstalled(input.env) ? ["terminal"] : []);
  // `launcher` when ccmsg's config has the section; `fork` from Claude Code
  // transcripts (DR-0038, DR-0039); `sandbox` once HTTP is up (SandboxSide,
  // DR-0042).
  const config = startConfig(input.env, log);
  // The mesh (DR-0047): the config's list and mesh.json, both checked now
  // (a damaged one fails startup); links once HTTP is bound (server.ts).
  const mesh = new Mesh({
    ...{ id, log, configRows: config.mesh?.endpoints ?? [], peersFile: files.mesh },
    fileRows: readPeersFile(files.mesh),
    ...(input.testHooks ? meshTestHooks(input.env) : {}),
    // A link coming or going shows in `peers` (reachable) at once.
    changed: () => hub.invalidate("peers"),
  });
  // KV across instances (DR-0049): inert without peers but for the purge of
  // old tombstones. Not with the team store, which instances already share.
  const kvReplication =
    input.team === undefined
      ? new KvReplication({
          ...{ port: mesh, kv, store: store.kv, commit: (write) => store.queue.run(write) },
          ...{ clock, log },
        })
      : undefined;
  if (config.launcher !== undefined) capabilities.add("launcher");
  if (input.harness === "claude") capabilities.add("fork");
  // The LLM capabilities when a webhook source is configured (DR-0043).
  const llm = serveLlm({
    ...{ id, clock, hub, sessions, store, config: config.llm, stateDir: input.stateDir },
    ...{ capabilities, log },
  });
  const sandbox = new SandboxGrants(() => clock.now());
  const connections = new Set<Connection>();
  // After every topic is registered: the relay passes on only what this
  // build serves.
  const across = workAcross({ mesh, hub, sessions, clock, log });
  messaging.candidatesElsewhere((row, local) =>
    across.forwarder.candidates(row.repo_root ?? row.cwd, row.sid, local),
  );
  const services: Services = {
    instanceId: id,
    version: VERSION,
    startedAt: input.startedAt,
    log,
    sessions,
    presence,
    messaging,
    hub,
    kv,
    capabilities,
    configHome: input.configHome,
    harness: input.harness,
    env: input.env,
    transcripts,
    dumpDir: files.dumps,
    search,
    sandbox,
    llmUsage: llm.usage,
    llmQuota: llm.quota,
    now: () => clock.now(),
    people: input.people,
    self: () => mesh.instances()[0]!,
    mesh,
    forwarder: across.forwarder,
    clientCount: () => connections.size,
    httpAddresses: input.httpAddresses,
    shutdown: input.shutdown,
  };
  const dispatcher = new Dispatcher(
    id,
    handlerTable(services),
    capabilities,
    log,
    (identity) => {
      if (identity.role === "session") sessions.touch(identity.sid);
    },
    { ...adminHandlers(services), ...meshAdminHandlers(services) },
  );
  dispatcher.linkedBy((conn) => mesh.peerOf(conn));
  dispatcher.forwardWith(across.forwarder);
  const runner = new MutationRunner(undefined);
  // The interval syncs write the instance's own board, not a team board.
  const boardSync = input.team
    ? {
        start: () => {
          if (config.sync !== undefined) log.warn("board syncs are not run on a team board");
        },
        dispose() {},
      }
    : new BoardSyncScheduler({
        ...{ config, env: input.env, cwd: process.cwd(), log, runner },
        ...{ db: store.db, dbPath: store.state.path, changed: (items) => board.offer(items) },
      });
  return {
    config,
    teamBoard: input.team,
    hub,
    sessions,
    messaging,
    presence,
    board,
    transcripts,
    search,
    reservations,
    sandbox: {
      grants: sandbox,
      surfaces: { sessions, presence, transcripts },
      offer(port) {
        sandbox.serveOn(port);
        capabilities.add("sandbox");
      },
    },
    llm,
    webhook: llm.webhook,
    expire: () => {
      sessions.expire();
      across.relay.expire();
      llm.requests.expire();
      llm.due();
    },
    runner,
    boardSync,
    dispatcher,
    connections,
    mesh,
    kvReplication,
    inbound: mesh.inbound(dispatcher),
    across,
  };
}

/** Every op this build implements, by plane; an op missing here answers
 * `internal_error` "not implemented in this build" (the HTTP-carried auth ops
 * answer `bad_request`: they are served by auth/auth-routes.ts, never as
 * frames). */
export function handlerTable(services: Services): Handlers {
  return {
    ...connectHandlers(services),
    ...messagingHandlers(services),
    ...controlHandlers(services),
    ...sessionControlHandlers(services),
    ...transcriptHandlers(services),
    ...transcriptItemsHandlers(services),
    ...fileHandlers(services),
    ...launcherHandlers(services),
    ...forkOriginHandlers(services),
    ...sandboxHandlers(services),
    ...llmHandlers(services),
    ...authHandlers(services),
  };
}

/** ccmsg's config as read once, at start: what it sets up (the launcher,
 * the board's interval syncs, webhook sources) stays as it was until a restart. A config that
 * cannot be read leaves them off, and the log says why. */
function startConfig(env: NodeJS.ProcessEnv, log: Logger): CcmsgConfig {
  try {
    return loadConfig(configFile(undefined, env));
  } catch (error) {
    // A mesh that silently lost its list would look like unreachable peers.
    if (error instanceof MeshConfigError) throw error;
    log.error(
      { err: error },
      "config not read: the launcher, interval syncs, LLM webhook and a configured team board are off",
    );
    return {};
  }
}
