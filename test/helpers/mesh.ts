/**
 * A mesh of real instances for integration tests (DR-0047).
 *
 * `startMesh(n, opts?)` starts n real instances (`ccmsg daemon run` in
 * distinct temp homes and state dirs, HTTP on loopback, test hooks on), each
 * with the others in its `mesh.json` — written by the same module
 * `ccmsg mesh add` uses — and short mesh timers (heartbeat, dead, backoff;
 * override with `opts`). Between every ordered pair (i → j) sits a real TCP
 * proxy: instance i opens its connections to j's endpoint there
 * (`CCMSG_TEST_MESH_DIAL`), while the URL, `aud` and the Host header stay j's
 * endpoint. A link between i and j runs through i→j when i dialed it and
 * through j→i when j did (both dial; glare keeps one).
 *
 * Ports: free loopback ports are picked first and each instance is started
 * with `--http 127.0.0.1:<port>`, so every endpoint (`http://127.0.0.1:<port>/`)
 * is known before any instance starts, and stays the same across `restart(i)`.
 *
 *   const mesh = await startMesh(3);
 *   await mesh.waitLinked();            // every pair linked, both views
 *   mesh.cut(0, 1, "blackhole");        // i→j only; "reset" sends RSTs
 *   mesh.isolate(2);                    // every link of 2, both directions
 *   mesh.heal();                        // all proxies forward again
 *   await mesh.restart(1);              // SIGTERM, then the same dir and port
 *   await mesh.list(0);                 // `admin_mesh_list` of instance 0
 *   await mesh.stop();                  // instances and proxies (also afterAll)
 *
 * `mesh.instances[i]` is a TestInstance (test/helpers/instance.ts), so
 * `Peer.unix(mesh.instances[i].socket)` and `runCli(…, mesh.env(i))` work.
 */
import { mkdirSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { Client } from "../../src/client/client.js";
import type { MeshListing } from "../../src/config/mesh.js";
import { writePeersFile } from "../../src/config/mesh.js";
import { afterEachFile } from "./after-file.js";
import { defaultStateDir, isolatedHome, startInstance, type TestInstance } from "./instance.js";
import { freePorts } from "./ports.js";

export type CutMode = "reset" | "blackhole";

export interface MeshOptions {
  heartbeatMs?: number;
  deadMs?: number;
  backoffMs?: number;
  /** Extra environment for every instance. */
  env?: Record<string, string>;
  /** Extra environment for instance i (after `env`). */
  envOf?: (i: number, home: Record<string, string>) => Record<string, string>;
  /** Leave mesh.json empty (a test adds peers itself). */
  noPeers?: boolean;
}

export interface TestMesh {
  instances: TestInstance[];
  endpoints: string[];
  /** The environment the CLI needs to reach instance i. */
  env(i: number): Record<string, string>;
  cut(from: number, to: number, mode: CutMode): void;
  /** TCP connections open through the proxy from → to now. */
  connections(from: number, to: number): number;
  isolate(i: number, mode?: CutMode): void;
  heal(): void;
  /** Resolves once every instance lists every other as reachable. */
  waitLinked(timeoutMs?: number): Promise<void>;
  list(i: number): Promise<MeshListing>;
  /** Stop instance i gracefully and start it again (same dir, port, env). */
  restart(i: number): Promise<TestInstance>;
  stop(): Promise<void>;
}

/** A TCP proxy that can be cut: `reset` kills its connections with RSTs and
 * refuses new ones; `blackhole` keeps them open but forwards nothing. */
export class CutProxy {
  mode: CutMode | undefined;
  private readonly sockets = new Set<Socket>();
  private constructor(
    readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<CutProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const proxy = new CutProxy(server, (server.address() as { port: number }).port);
    server.on("connection", (inbound) => proxy.accepted(inbound, targetPort));
    return proxy;
  }

  private accepted(inbound: Socket, targetPort: number): void {
    if (this.mode === "reset") {
      inbound.resetAndDestroy();
      return;
    }
    const outbound = tcpConnect(targetPort, "127.0.0.1");
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      this.sockets.add(from);
      from.on("data", (chunk) => {
        if (this.mode === undefined) to.write(chunk);
      });
      from.on("error", () => {});
      from.on("close", () => {
        this.sockets.delete(from);
        if (this.mode !== "blackhole") to.destroy();
      });
    }
  }

  /** Connections open through it (each is two sockets). */
  get open(): number {
    return this.sockets.size / 2;
  }

  cut(mode: CutMode): void {
    this.mode = mode;
    if (mode === "reset") for (const s of this.sockets) s.resetAndDestroy();
  }

  heal(): void {
    // Connections a black hole held are dead to both ends: cut them so
    // each side learns it now rather than from its own timers.
    if (this.mode === "blackhole") for (const s of this.sockets) s.destroy();
    this.mode = undefined;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Send one administrative frame to an instance over its socket. */
export async function adminFrame<T>(socket: string, op: string, args: object = {}): Promise<T> {
  const client = await Client.connectUnix(socket);
  try {
    const { ok, request_id: _r, error, ...result } = await client.send(op, args);
    if (!ok) throw new Error(`${op}: ${error?.code}: ${error?.msg}`);
    return result as T;
  } finally {
    client.close();
  }
}

const meshes = new Set<TestMesh>();
afterEachFile(async () => {
  for (const m of meshes) await m.stop();
});

export async function startMesh(n: number, opts: MeshOptions = {}): Promise<TestMesh> {
  const ports = await freePorts(n);
  const endpoints = ports.map((p) => `http://127.0.0.1:${p}/`);
  const proxies = new Map<string, CutProxy>();
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      if (i !== j) proxies.set(`${i}>${j}`, await CutProxy.start(ports[j]!));
  const homes = endpoints.map(() => isolatedHome());
  const envs = homes.map((home, i) => {
    const dial: Record<string, string> = {};
    for (let j = 0; j < n; j++)
      if (j !== i) dial[endpoints[j]!] = `127.0.0.1:${proxies.get(`${i}>${j}`)!.port}`;
    return {
      ...home.env,
      ...opts.env,
      ...opts.envOf?.(i, home.env),
      CCMSG_TEST_MESH_HEARTBEAT_MS: String(opts.heartbeatMs ?? 200),
      CCMSG_TEST_MESH_DEAD_MS: String(opts.deadMs ?? 1000),
      CCMSG_TEST_MESH_BACKOFF_MS: String(opts.backoffMs ?? 150),
      CCMSG_TEST_MESH_DIAL: JSON.stringify(dial),
    };
  });
  const stateDirs = envs.map((env) => defaultStateDir(env));
  if (!opts.noPeers)
    stateDirs.forEach((dir, i) => {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writePeersFile(
        join(dir, "mesh.json"),
        endpoints.filter((_, j) => j !== i).map((endpoint) => ({ endpoint })),
      );
    });
  const start = (i: number) =>
    startInstance({
      env: envs[i]!,
      stateDir: stateDirs[i]!,
      args: ["--http", `127.0.0.1:${ports[i]}`],
    });
  const instances = await Promise.all(endpoints.map((_, i) => start(i)));
  let stopped = false;
  const mesh: TestMesh = {
    instances,
    endpoints,
    env: (i) => ({ ...envs[i]!, CCMSG_STATE_DIR: stateDirs[i]! }),
    cut(from, to, mode) {
      proxies.get(`${from}>${to}`)!.cut(mode);
    },
    connections: (from, to) => proxies.get(`${from}>${to}`)!.open,
    isolate(i, mode = "reset") {
      for (let j = 0; j < n; j++)
        if (j !== i) {
          proxies.get(`${i}>${j}`)!.cut(mode);
          proxies.get(`${j}>${i}`)!.cut(mode);
        }
    },
    heal() {
      for (const p of proxies.values()) p.heal();
    },
    list: (i) => adminFrame<MeshListing>(instances[i]!.socket, "admin_mesh_list"),
    async waitLinked(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lists = await Promise.all(instances.map((_, i) => mesh.list(i)));
        const ok = lists.every(
          (l) => l.peers.length === n - 1 && l.peers.every((p) => p.reachable),
        );
        if (ok) return;
        if (Date.now() > deadline)
          throw new Error(`mesh not linked after ${timeoutMs} ms: ${JSON.stringify(lists)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async restart(i) {
      await instances[i]!.stop();
      instances[i] = await start(i);
      return instances[i]!;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      meshes.delete(mesh);
      await Promise.all(instances.map((inst) => inst.stop()));
      await Promise.all([...proxies.values()].map((p) => p.close()));
    },
  };
  meshes.add(mesh);
  return mesh;
}
