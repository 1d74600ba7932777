import { INBOX_RETENTION_MS } from "../contract/constants.js";
import { writeFileAtomic } from "../state/atomic-write.js";
import { InstanceLock } from "../state/instance-lock.js";
import { claimingHarness, configHome, stateFiles } from "../state/paths.js";
import { prepareStateDir } from "../state/state-dir.js";
import { Clock } from "../util/clock.js";
import { VERSION } from "../util/version.js";
import { buildEngines, type EngineInputs } from "./engines.js";
import type { startHttp, TakenPort } from "./http/listener.js";
import { openLog } from "./log.js";
import { stopInstance } from "./shutdown.js";
import { loadOrMintInstanceId } from "./store/identity.js";
import { type InstanceStore, openInstanceStore } from "./store/instance-store.js";
import { Connection } from "./wire/connection.js";
import { type KeptSocket, keepSocket } from "./wire/socket-keeper.js";
import type { Transport } from "./wire/transport.js";

export interface InstanceOptions extends Pick<EngineInputs, "team"> {
  stateDir: string;
  /** `host:port` (port 0 = ephemeral), or null for no HTTP listener. */
  http: string | null;
  /** Register the test-only routes (clock control, board metrics). */
  testHooks?: boolean;
  /** Refuse board mutations (HTTP 403) before any database work. */
  readOnly?: boolean;
  /** A damaged database is moved aside (kept) and an empty one started. */
  recover?: boolean;
  env?: Record<string, string | undefined>;
}

export interface RunningInstance extends TakenPort {
  id: string;
  pid: number;
  socket: string;
  /** The bound base URL, e.g. `http://127.0.0.1:43121/`, or null. */
  http: string | null;
  startedAt: number;
  /** Resolves when the instance has fully stopped. */
  stopped: Promise<void>;
  stop(reason: string): Promise<void>;
}

/**
 * Start an instance — the composition root, wiring only: the state directory,
 * the single-instance lock, the id, the store, the engines, then the listeners
 * (the local socket first, then HTTP: DR-0007) and finally `instance.json`,
 * which is how others find what was bound. HTTP and the inbox's compaction
 * come after the socket listens; schemas compile on first use (DR-0022).
 */
export async function startInstance(options: InstanceOptions): Promise<RunningInstance> {
  const files = stateFiles(options.stateDir);
  prepareStateDir(options.stateDir);
  const lock = InstanceLock.acquire(files.lock);
  const env = options.env ?? process.env;
  // Test hooks: a small log rotation size; an instance that starts "later"
  // (a restart after days passed).
  const hook = (name: string) => (options.testHooks ? Number(env[name]) || undefined : undefined);
  const maxBytes = hook("CCMSG_TEST_LOG_MAX_BYTES");
  const logFile = openLog(files.log, maxBytes ? { maxBytes } : {});
  const { log } = logFile;
  const release = async () => {
    await logFile.close();
    lock.release();
  };
  let store: InstanceStore | undefined;
  let uds: KeptSocket | undefined;
  try {
    const clock = new Clock(hook("CCMSG_TEST_CLOCK_OFFSET_MS") ?? 0);
    const startedAt = clock.now();
    const id = loadOrMintInstanceId(files.instanceId);
    const opened = openInstanceStore(files.database, log, options.recover ?? false);
    store = opened;
    let http: Awaited<ReturnType<typeof startHttp>> | undefined;
    let stopping: Promise<void> | undefined;
    let resolveStopped = () => {};
    const stopped = new Promise<void>((resolve) => {
      resolveStopped = resolve;
    });
    const stop = (reason: string): Promise<void> => {
      stopping ??= stopInstance(
        {
          ...{ id, log, ...engines, store: opened, uds: listening, http, release },
          runtimeFiles: [files.instanceJson, files.socket],
        },
        reason,
      ).then(resolveStopped);
      return stopping;
    };
    const engines = await buildEngines({
      ...{ id, startedAt, clock, store: opened, log, env, configHome: configHome(env) },
      ...{ harness: claimingHarness(env), stateDir: options.stateDir, team: options.team },
      httpAddresses: () => (http === undefined ? [] : [http.address]),
      ...{ shutdown: (reason: string) => void stop(reason), people: () => http?.people },
      testHooks: options.testHooks,
    });
    const { sessions, messaging, runner, board, connections, teamBoard } = engines;
    const accept = (transport: Transport) => {
      const conn = new Connection(transport, engines.inbound);
      if (stopping !== undefined) return conn.close();
      connections.add(conn);
      conn.onClose(() => connections.delete(conn));
    };
    const listening = await keepSocket(files.socket, accept, log);
    uds = listening;
    engines.boardSync.start();
    const compacted = engines.search.ready.then(() => opened.compact(startedAt));
    if (options.http !== null) {
      const { startHttp } = await import("./http/listener.js");
      http = await startHttp({
        ...{ listen: options.http, accept, log, store: opened, stateDir: options.stateDir },
        owner: {
          secretPath: files.ownerSecret,
          run: { instance: id, startedAt },
          now: () => clock.now(),
        },
        controlPane: {
          ...{ store: opened.state, readOnly: options.readOnly ?? false, runner, teamBoard },
          sessions: () => sessions.peers(),
          sessionsVersion: () => sessions.version,
          unreadMessages: () => opened.inbox.heldTotal(clock.now(), INBOX_RETENTION_MS),
          changed: (items) => board.offer(items),
        },
        ...{ search: engines.search, sandbox: engines.sandbox, webhook: engines.webhook },
        ...{ mesh: engines.mesh, hooks: engines.hooks, attention: engines.attentionHttp },
        ...{ network: engines.config.http ?? {}, accessTtlMs: hook("CCMSG_TEST_ACCESS_TTL_MS") },
        testHooks: options.testHooks
          ? {
              ...{ clock, runner, db: opened.db, search: engines.search },
              expire: () => engines.expire(),
              compacted: () => compacted,
              inboxReceiver: (sid) => messaging.receiverOf(sid),
            }
          : undefined,
      });
    }
    const url = http === undefined ? null : `http://${http.address}/`;
    const run = { pid: process.pid, socket: files.socket, http: url };
    const json = { instance: id, ...run, started_at: startedAt, version: VERSION };
    writeFileAtomic(files.instanceJson, `${JSON.stringify(json, null, 2)}\n`);
    log.info({ instance: id, ...run }, "started");
    return { id, ...run, httpTaken: http?.httpTaken, startedAt, stopped, stop };
  } catch (error) {
    log.error({ err: error }, "startup failed");
    await uds?.close();
    store?.db.close();
    await release();
    throw error;
  }
}
