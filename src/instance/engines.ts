import type { MutationRunner } from "../board/runner.js";
import type { TeamBoard } from "../board/team-board.js";
import { type CcmsgConfig, loadConfig } from "../config/config.js";
import { MeshConfigError } from "../config/mesh.js";
import type { Capability } from "../contract/identifiers.js";
import type { InstanceInfo } from "../contract/peers.js";
import { configFile, stateFiles } from "../state/paths.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { VERSION } from "../util/version.js";
import { dialogOf } from "./attention/dialog.js";
import type { Attention } from "./attention/engine.js";
import { type AttentionHttpDeps, attentionHttp } from "./attention/http.js";
import { registerAttention } from "./attention/register.js";
import type { PersonAuth } from "./auth/person-auth.js";
import { registerAuth } from "./auth/register.js";
import { registerBoard } from "./board/register.js";
import type { WorkItemsTopic } from "./board/work-items-topic.js";
import { registerCommonPlane } from "./common/register.js";
import { type Contribution, Dispatcher } from "./dispatch.js";
import { registerFiles } from "./files/register.js";
import type { HookAnswers } from "./hooks/answers.js";
import { registerHooks } from "./hooks/register.js";
import { registerKv } from "./kv/register.js";
import type { ReservationSweeper } from "./kv/reservation-sweeper.js";
import { registerLauncher } from "./launcher/register.js";
import { type LlmServed, registerLlm } from "./llm/register.js";
import type { WebhookDeps } from "./llm/webhook.js";
import type { KvReplication } from "./mesh/kv-replication.js";
import type { Mesh } from "./mesh/mesh.js";
import { registerMesh } from "./mesh/register.js";
import type { MeshRelay } from "./mesh/relay.js";
import type { Messaging } from "./messaging/engine.js";
import { registerMessaging } from "./messaging/register.js";
import { registerSandbox, type SandboxSide } from "./sandbox/register.js";
import type { SearchEngine } from "./search/engine.js";
import { registerSearch } from "./search/register.js";
import { registerSessionControl } from "./session-control/register.js";
import type { HarnessKind, Presence } from "./sessions/presence.js";
import { registerSessions } from "./sessions/register.js";
import type { Sessions } from "./sessions/sessions.js";
import type { InstanceStore } from "./store/instance-store.js";
import { TopicHub } from "./topic-hub.js";
import type { Transcripts } from "./transcripts/engine.js";
import { registerTranscripts } from "./transcripts/register.js";
import type { Connection, InboundHandler } from "./wire/connection.js";

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
  /** The attention queue (DR-0062): the hook route asks it. */
  attention: Attention;
  /** …and its HTTP routes (`/api/attention`), as the person. */
  attentionHttp: AttentionHttpDeps;
  sessions: Sessions;
  messaging: Messaging;
  presence: Presence;
  board: WorkItemsTopic;
  transcripts: Transcripts;
  search: SearchEngine;
  reservations: ReservationSweeper;
  /** The http hooks' answers (DR-0058). */
  hooks: HookAnswers;
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
  boardSync: { start(): void; dispose(): void };
  dispatcher: Dispatcher;
  /** Every open connection. */
  connections: Set<Connection>;
  /** ccmsg's config as read at start. */
  config: CcmsgConfig;
  /** The mesh's links (started once HTTP is bound; DR-0047). */
  mesh: Mesh;
  /** KV replication over those links (DR-0049). */
  kvReplication?: KvReplication;
  /** The relay of peers' topics (DR-0048). */
  relay: MeshRelay;
  /** What every accepted connection reads through: mesh handshakes and link
   * frames first, then dispatch. */
  inbound: InboundHandler;
}

/**
 * The capabilities, each registered with exactly what it needs, in start
 * order: the topic hub first (capabilities register the topics they serve),
 * then search (messaging's observer), sessions, KV, the mesh, messaging, the
 * board, the session controls and the launcher, transcripts, the LLM side,
 * files and the sandbox, auth; the relay once every topic is known, the
 * common plane over all of it, and dispatch over every handler. Capabilities
 * are offered in that order. The one cycle: `peers` lists the mesh's
 * instances and the mesh forwards by the sessions' registry, so sessions get
 * `instances` as a function over the mesh registered after them. A
 * capability not configured loads nothing (its register.ts decides).
 */
export async function buildEngines(input: EngineInputs): Promise<Engines> {
  const { id, clock, store, log, env, harness, configHome, team } = input;
  const files = stateFiles(input.stateDir);
  const hub = new TopicHub(id, log);
  // What ccmsg's config sets up stays as read now until a restart.
  const config = startConfig(env, log);
  const capabilities = new Set<Capability>();
  const parts: Contribution[] = [];
  /** A capability's contribution joins the instance as it registers. */
  const take = <T extends Contribution>(part: T): T => {
    parts.push(part);
    for (const c of part.capabilities ?? []) capabilities.add(c);
    return part;
  };
  const search = take(
    registerSearch({
      ...{ index: files.search, store: files.database, harness, home: configHome, log },
      // Test hook: the index's disk is "full" from the start.
      ...(input.testHooks && env.CCMSG_TEST_SEARCH_INDEX_FULL === "1" ? { maxPageCount: 1 } : {}),
    }),
  );
  const sessions = take(
    registerSessions({
      ...{ instanceId: id, store, clock, hub, harness, configHome, log },
      instances: (): InstanceInfo[] => mesh.mesh.instances(),
    }),
  );
  const kv = take(registerKv({ store, team, hub, clock, log }));
  const mesh = take(
    registerMesh({
      ...{ instanceId: id, config: config.mesh, peersFile: files.mesh, hub, clock, log },
      ...{ sessions: sessions.sessions, presence: sessions.presence },
      // KV across instances (DR-0049), unless the team store already shares it.
      kv: team === undefined ? { kv: kv.kv, store } : undefined,
      testEnv: input.testHooks ? env : undefined,
    }),
  );
  const { presence } = sessions;
  const messaging = take(
    registerMessaging({
      ...{ instanceId: id, sessions: sessions.sessions, store, hub, clock, log },
      ...{ harness, configHome, env, observer: search.search, forwarder: mesh.forwarder },
      evidence: search.search,
    }),
  );
  const attention = take(
    registerAttention({
      ...{ instanceId: id, db: store.db, queue: store.queue, hub, clock, log },
      ...{ kv: kv.kv, mesh: mesh.mesh, ...attentionTimes(config, env, input.testHooks) },
      dialog: (sid) => dialogOf(harness, configHome, sid),
      label: (sid) => sessions.sessions.label(sid),
      messagedAt: (sid) => {
        const found = sessions.sessions.lookup(sid);
        return found?.kind === "live" ? found.session.last_user_input_at : undefined;
      },
      ended: (item) => search.search.attention(item),
    }),
  );
  const { hooks } = take(
    registerHooks({
      ...{ messaging: messaging.messaging, kv: kv.kv, sessions: sessions.sessions },
      ...{ attention: attention.attention, clock, stateDir: input.stateDir, env },
    }),
  );
  const board = take(registerBoard({ store, team, hub, config, env, log }));
  const ops = {
    ...{ instanceId: id, log, sessions: sessions.sessions, presence, capabilities },
    ...{ configHome, harness, env },
  };
  take(registerSessionControl({ ...ops, search: search.search, testHooks: input.testHooks }));
  take(registerLauncher({ ...ops, config: config.launcher }));
  const transcripts = take(
    registerTranscripts({
      ...{ instanceId: id, harness, configHome, sessions: sessions.sessions, hub, env, log },
      dumpDir: files.dumps,
      sent: store.inbox,
    }),
  );
  const llm = take(
    await registerLlm({
      ...{ id, clock, hub, sessions: sessions.sessions, store, config: config.llm },
      ...{ stateDir: input.stateDir, capabilities, log },
    }),
  );
  const surfaces = {
    ...{ sessions: sessions.sessions, presence, transcripts: transcripts.transcripts },
  };
  take(registerFiles(surfaces));
  const sandbox = take(registerSandbox({ ...surfaces, clock, log, capabilities }));
  take(registerAuth({ people: input.people }));
  // After every topic is registered: the relay passes on only what this
  // build serves.
  const relay = mesh.relay();
  const connections = new Set<Connection>();
  take(
    registerCommonPlane({
      ...ops,
      ...{ version: VERSION, startedAt: input.startedAt, hub, mesh: mesh.mesh },
      ...{ messaging: messaging.messaging, transcripts: transcripts.transcripts },
      clientCount: () => connections.size,
      ...{ httpAddresses: input.httpAddresses, shutdown: input.shutdown },
    }),
  );
  const dispatcher = new Dispatcher({
    ...{ instanceId: id, capabilities, log, forwarder: mesh.forwarder },
    handlers: Object.assign({}, ...parts.map((p) => p.handlers)),
    admin: Object.assign({}, ...parts.map((p) => p.admin ?? {})),
    onRequest: (identity) => {
      if (identity.role === "session") sessions.sessions.touch(identity.sid);
    },
    linkPeer: (conn) => mesh.mesh.peerOf(conn),
  });
  return {
    config,
    attention: attention.attention,
    attentionHttp: attentionHttp({
      ...{ attention: attention.attention, instanceId: id },
      ...{ mesh: mesh.mesh, forwarder: mesh.forwarder },
    }),
    teamBoard: team,
    hub,
    sessions: sessions.sessions,
    messaging: messaging.messaging,
    presence,
    board: board.board,
    runner: board.runner,
    boardSync: board.boardSync,
    transcripts: transcripts.transcripts,
    search: search.search,
    reservations: kv.reservations,
    hooks,
    sandbox: sandbox.sandbox,
    llm,
    webhook: llm.webhook,
    expire: () => {
      sessions.sessions.expire();
      relay.expire();
      llm.expire();
      llm.due();
      kv.reservations.expire();
    },
    dispatcher,
    connections,
    mesh: mesh.mesh,
    kvReplication: mesh.kvReplication,
    relay,
    inbound: mesh.mesh.inbound(dispatcher),
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

/** The attention queue's holds (Claude Code's, Codex's) and at-the-terminal
 * window: the config's, or the test hook's hold for both. */
function attentionTimes(
  config: CcmsgConfig,
  env: NodeJS.ProcessEnv,
  testHooks: boolean | undefined,
): { holdMs?: number; codexHoldMs?: number; atTerminalMs?: number } {
  const a = config.attention ?? {};
  const testHold = testHooks ? env.CCMSG_TEST_ATTENTION_HOLD_MS : undefined;
  // A scripted session types its prompt into the pane: tests that answer
  // from elsewhere turn the at-the-terminal window off with "0".
  const testWindow = testHooks ? env.CCMSG_TEST_ATTENTION_AT_TERMINAL_MS : undefined;
  return {
    ...(testHold !== undefined
      ? { holdMs: Number(testHold), codexHoldMs: Number(testHold) }
      : {
          ...(a.hold_seconds === undefined ? {} : { holdMs: a.hold_seconds * 1000 }),
          ...(a.codex_hold_seconds === undefined
            ? {}
            : { codexHoldMs: a.codex_hold_seconds * 1000 }),
        }),
    ...(testWindow !== undefined
      ? { atTerminalMs: Number(testWindow) }
      : a.at_terminal_seconds === undefined
        ? {}
        : { atTerminalMs: a.at_terminal_seconds * 1000 }),
  };
}
