import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:net";
import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import { controlPaneMetrics, controlPaneRoutes } from "../board/http.js";
import { MutationRunner } from "../board/runner.js";
import { WorkItemsWatch } from "../board/watch.js";
import { INBOX_RETENTION_MS } from "../contract/constants.js";
import type { WorkItem } from "../contract/ecc/board.js";
import type { Capability } from "../contract/identifiers.js";
import type { InstanceInfo, LastLiveSession } from "../contract/peers.js";
import { compileContract } from "../contract/validate.js";
import { claudeConfigHome, stateFiles } from "../paths.js";
import { CommitQueue } from "../store/commit-queue.js";
import { openDatabase } from "../store/database.js";
import { EccSessionsStore, type MirroredSession } from "../store/ecc-sessions.js";
import { InboxStore } from "../store/inbox.js";
import { KvStore } from "../store/kv.js";
import { LastLiveStore } from "../store/last-live.js";
import { migrate } from "../store/migrate.js";
import { MIGRATIONS } from "../store/migrations/index.js";
import type { StateStore } from "../store/state-store.js";
import { busy } from "../store/state-store.js";
import { WorkItemsStore } from "../store/work-items.js";
import { VERSION } from "../version.js";
import { Clock } from "./clock.js";
import type { Connection } from "./connection.js";
import { Dispatcher } from "./dispatch.js";
import { commonHandlers } from "./handlers/common.js";
import { controlHandlers } from "./handlers/control.js";
import { messagingHandlers } from "./handlers/messaging.js";
import type { Services } from "./handlers/services.js";
import { loadOrMintInstanceId } from "./identity.js";
import { InstanceLock } from "./lock.js";
import { openLog } from "./log.js";
import { Messaging } from "./messaging.js";
import type { LiveSession } from "./sessions.js";
import { Sessions } from "./sessions.js";
import { TopicHub } from "./topic-hub.js";
import { listenUnix } from "./transport/uds.js";

/** The longest the instance's event loop may wait for another process's write
 * lock on a synchronous write (KV, last_live); past it the op fails and is
 * retried by its caller. */
const MAIN_BUSY_TIMEOUT_MS = 50;

export interface InstanceOptions {
  stateDir: string;
  /** `host:port` (port 0 = ephemeral), or null for no HTTP listener. */
  http: string | null;
  /** Enable test hooks (clock control) on the HTTP listener. */
  testHooks?: boolean;
  /** Refuse board mutations (HTTP 403) before any database work. */
  readOnly?: boolean;
  env?: Record<string, string | undefined>;
}

export interface RunningInstance {
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
 * Start an instance: state directory, the single-instance lock, the instance
 * id, the store (compacting the inbox once), then the listeners — the local
 * socket first, then HTTP — and finally `instance.json`, which is how others
 * find what was bound. (The contract's reference binds HTTP first so mesh
 * peers can fetch keys early; without a mesh, answering local sessions first
 * matters more.)
 */
export async function startInstance(options: InstanceOptions): Promise<RunningInstance> {
  compileContract();
  const files = stateFiles(options.stateDir);
  mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
  const lock = InstanceLock.acquire(files.lock);
  const { log, close: closeLog } = openLog(files.log);
  try {
    return await boot(options, files, lock, log, closeLog);
  } catch (error) {
    log.error({ err: error }, "startup failed");
    await closeLog();
    lock.release();
    throw error;
  }
}

async function boot(
  options: InstanceOptions,
  files: ReturnType<typeof stateFiles>,
  lock: InstanceLock,
  log: ReturnType<typeof openLog>["log"],
  closeLog: () => Promise<void>,
): Promise<RunningInstance> {
  const env = options.env ?? process.env;
  // Test hook: an instance may start "later" (a restart after days passed).
  const clock = new Clock(options.testHooks ? Number(env.CCMSG_TEST_CLOCK_OFFSET_MS ?? 0) || 0 : 0);
  const startedAt = clock.now();
  const instanceId = loadOrMintInstanceId(files.instanceId);
  // The instance's own connection waits at most briefly for another process's
  // write lock: its group commit retries on a timer instead, so the event loop
  // never sits in SQLite's busy wait.
  const db = openDatabase(files.database, { busyTimeoutMs: MAIN_BUSY_TIMEOUT_MS });
  busy(files.database, () => migrate(db, MIGRATIONS));
  const queue = new CommitQueue(db, files.database);
  const inbox = new InboxStore(db, queue);
  const compacted = inbox.compact(clock.now(), INBOX_RETENTION_MS);
  const persist = (write: () => void) => {
    queue.run(write).catch((error: unknown) => log.error({ err: error }, "state write failed"));
  };
  const sessions = new Sessions(instanceId, new LastLiveStore(db), clock, persist);
  // Mirror sessions into ECC's `sessions` table for status, HUD and ECC tools.
  const eccSessions = new EccSessionsStore(db);
  sessions.onLifecycle((s) => persist(() => eccSessions.put(mirrorOf(instanceId, s))));
  const store: StateStore = {
    db,
    path: files.database,
    write: (fn) => busy(files.database, () => db.transaction(fn).immediate()),
    read: (fn) => busy(files.database, () => db.transaction(fn).deferred()),
    close: () => db.close(),
  };
  const runner = new MutationRunner(undefined);
  let publishItems: (items: WorkItem[]) => void = () => {};
  const board = new WorkItemsWatch(db, (items) => publishItems(items));
  const kv = new KvStore(db);
  const capabilities = new Set<Capability>();
  const connections = new Set<Connection>();
  let httpAddress: string | null = null;

  const self = (): InstanceInfo => ({ id: instanceId, host: hostname(), reachable: true });
  const emptyStatus = (sid: string | undefined) => ({
    sid,
    todos: [],
    workflows: [],
    background: [],
    teammates: [],
    agent_tree: { teammates: [], agents: [], workflows: [] },
    external_files: [],
    workspace_folders: [],
  });
  let messaging: Messaging;
  const hub = new TopicHub(
    instanceId,
    {
      peers: () => ({ ...sessions.peers(), instances: [self()] }),
      session_status: emptyStatus,
    },
    {
      inbox: (conn) =>
        conn.identity?.role === "session" ? messaging.takeHeld(conn.identity.sid!) : [],
      kv: (_conn, ns) => ({ entries: kv.list(ns!) }),
      work_items: () => {
        board.setWatched(true);
        return { items: new WorkItemsStore(db).recent(WORK_ITEMS_SNAPSHOT) };
      },
    },
    log,
  );
  publishItems = (items) => {
    if (hub.count("work_items") === 0) board.setWatched(false);
    else hub.publish("work_items", { items });
  };
  messaging = new Messaging(instanceId, sessions, inbox, hub, clock, log);
  sessions.onChange(() => hub.invalidate("peers"));

  let stopping: Promise<void> | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => {
    resolveStopped = r;
  });

  const services: Services = {
    instanceId,
    version: VERSION,
    startedAt,
    clock,
    log,
    sessions,
    messaging,
    hub,
    kv,
    capabilities,
    configHome: claudeConfigHome(env),
    self,
    clientCount: () => connections.size,
    httpAddresses: () => (httpAddress === null ? [] : [httpAddress]),
    shutdown: (reason) => void stop(reason),
  };
  const dispatcher = new Dispatcher(
    instanceId,
    { ...commonHandlers(services), ...messagingHandlers(services), ...controlHandlers(services) },
    capabilities,
    log,
    (identity) => {
      if (identity.sid !== undefined) sessions.touch(identity.sid);
    },
  );
  const sink = {
    accept(conn: Connection) {
      if (stopping !== undefined) {
        conn.close();
        return;
      }
      connections.add(conn);
      conn.onClose(() => {
        connections.delete(conn);
        hub.dropConnection(conn);
      });
    },
    line: (conn: Connection, line: string) => dispatcher.handleLine(conn, line),
    oversized: (conn: Connection) => dispatcher.oversized(conn),
  };

  // The local socket first: sessions and the CLI reach the instance as soon
  // as it can answer; the HTTP stack (heavier to load) follows.
  const uds: Server = await listenUnix(files.socket, sink);
  let http: FastifyInstance | undefined;
  if (options.http !== null) {
    const { host, port } = parseHostPort(options.http);
    if (!isLoopback(host)) log.warn({ host }, "HTTP listener bound beyond loopback, as asked");
    const { listenHttp } = await import("./transport/http.js");
    const bound = await listenHttp({
      host,
      port,
      sink,
      routes: (app) => {
        controlPaneRoutes(app, {
          store,
          readOnly: options.readOnly ?? false,
          runner,
          sessions: () => sessions.peers(),
          unreadMessages: () => inbox.heldTotal(clock.now(), INBOX_RETENTION_MS),
          changed: (items) => board.offer(items),
        });
        if (!options.testHooks) return;
        app.get("/_test/board-metrics", async () => ({ ...runner.metrics, ...controlPaneMetrics }));
        // Test hook: move the instance clock instead of sleeping.
        app.post("/_test/clock", async (req) => {
          const ms = Number((req.body as { advance_ms?: unknown })?.advance_ms);
          if (!Number.isFinite(ms) || ms < 0) return { ok: false, error: "advance_ms must be ≥ 0" };
          clock.advance(ms);
          sessions.expire();
          return { ok: true, now: clock.now() };
        });
      },
    }).catch(async (error: unknown) => {
      await new Promise<void>((resolve) => uds.close(() => resolve()));
      throw error;
    });
    http = bound.app;
    httpAddress = bound.address;
  }
  const httpUrl = httpAddress === null ? null : `http://${httpAddress}/`;
  writeJsonAtomic(files.instanceJson, {
    instance: instanceId,
    pid: process.pid,
    socket: files.socket,
    http: httpUrl,
    started_at: startedAt,
    version: VERSION,
  });
  log.info(
    { instance: instanceId, socket: files.socket, http: httpUrl, compacted: compacted.removed },
    "started",
  );

  /**
   * Graceful stop (scenario 21's order): refuse new requests and give running
   * ones up to 5 s; tell every connection `restarting`; flush pending writes;
   * close HTTP (capped) and the local socket last; release the lock only after
   * every listener closed, so a stopping instance never looks stopped.
   */
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      log.info({ reason }, "stopping");
      dispatcher.stopping = true;
      await dispatcher.idle(5000);
      // A board mutation is never interrupted: wait for its transaction.
      await runner.close();
      board.dispose();
      const restarting = JSON.stringify({ ev: "restarting", instance: instanceId });
      for (const conn of connections) conn.send(restarting);
      queue.flush();
      sessions.close();
      hub.dispose();
      for (const conn of connections) conn.close();
      await Promise.race([http?.close(), delay(250)]);
      await new Promise<void>((resolve) => uds.close(() => resolve()));
      db.close();
      rmSync(files.instanceJson, { force: true });
      rmSync(files.socket, { force: true });
      log.info({ reason }, "stopped");
      await closeLog();
      lock.release();
      resolveStopped();
    })();
    return stopping;
  };

  return {
    id: instanceId,
    pid: process.pid,
    socket: files.socket,
    http: httpUrl,
    startedAt,
    stopped,
    stop,
  };
}

/** How many recently updated items a `work_items` snapshot carries; older
 * items arrive as they change. */
const WORK_ITEMS_SNAPSHOT = 200;

/** A session as ECC's `sessions` table holds it. */
function mirrorOf(instance: string, s: LiveSession | LastLiveSession): MirroredSession {
  const live = "connections" in s;
  const meta = live ? s.meta : s;
  const out: MirroredSession = {
    sid: s.sid,
    instance,
    state: live ? "active" : (s.state ?? "disappeared"),
    connected_at: s.connected_at,
  };
  for (const key of [
    "repo",
    "ws",
    "cwd",
    "repo_root",
    "branch",
    "title",
    "model",
    "effort",
    "transcript_path",
  ] as const) {
    const value = meta[key];
    if (typeof value === "string" && value !== "") out[key] = value;
  }
  if (!live) {
    out.last_seen_at = s.last_seen_at;
    if (s.stopped_at !== undefined) out.stopped_at = s.stopped_at;
  }
  return out;
}

function parseHostPort(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(":");
  const host = colon < 0 ? "127.0.0.1" : value.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(colon < 0 ? value : value.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`not a host:port: ${value}`);
  return { host: host || "127.0.0.1", port };
}

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost";
}

function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
