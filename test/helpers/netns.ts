/**
 * A mesh of real instances across Linux network namespaces: a real partition
 * (issue 15 item 3), where test/helpers/mesh.ts cuts user-space proxies.
 *
 * `startNetnsMesh(n)` builds a throwaway topology in the root namespace — a
 * bridge, and per instance a namespace with `lo` up and a veth into the
 * bridge, addressed in a private /24 (no address in the root namespace, so
 * the host's routes are untouched) — and starts in namespace i:
 *   - `ccmsg daemon run --http 127.0.0.1:<port>` (loopback, as deployed), with
 *     `http.endpoint` = `http://<address i>:8080/`, the URL peers dial and
 *     `aud` names; its mesh.json lists the others' endpoints;
 *   - a TCP forwarder on `<address i>:8080` → the loopback port (the reverse
 *     proxy a deployment puts in front).
 * The test itself stays in the root namespace and speaks to each instance on
 * its Unix socket (filesystem paths cross namespaces).
 *
 *   const net = await startNetnsMesh(3);
 *   await net.waitLinked();
 *   net.isolate(1);   // B's veth down at the bridge: silent, no RST, no FIN
 *   net.heal();
 *   await net.stop(); // also afterAll
 *
 * Names carry this process's pid. Teardown stops everything and deletes the
 * veths, the namespaces and the bridge; if this process dies
 * first (Ctrl-C, a timeout, SIGKILL), a detached janitor that waits on a pipe
 * from it does the same; and a run sweeps what a dead pid left behind.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { MeshListing } from "../../src/config/mesh.js";
import { writePeersFile } from "../../src/config/mesh.js";
import { configFile } from "../../src/state/paths.js";
import { afterEachFile } from "./after-file.js";
import {
  defaultStateDir,
  isolatedHome,
  ROOT,
  startInstance,
  type TestInstance,
} from "./instance.js";
import { adminFrame } from "./mesh.js";

const NS_PREFIX = "ccmsg-nt-";
const BR_PREFIX = "cnt";
const FORWARDER = join(ROOT, "test", "helpers", "tcp-forward.mjs");
/** The port each namespace's forwarder listens on (namespaces do not share ports). */
const PUBLIC_PORT = 8080;

function ip(...args: string[]): string {
  return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function quietly(fn: () => unknown): void {
  try {
    fn();
  } catch {}
}

/** Whether this environment lets a test build namespaces: probed once, by
 * creating (and deleting) one; `why` says what is missing. */
export const netnsSupport: { ok: boolean; why: string } = (() => {
  if (process.platform !== "linux") return { ok: false, why: "not Linux" };
  if (process.getuid?.() !== 0) return { ok: false, why: "not root (ip netns needs it)" };
  const probe = `${NS_PREFIX}${process.pid}-probe`;
  try {
    ip("netns", "add", probe);
  } catch (e) {
    return { ok: false, why: `\`ip netns add\` failed: ${String((e as Error).message).trim()}` };
  }
  quietly(() => ip("netns", "del", probe));
  return { ok: true, why: "" };
})();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
};

/** Remove what an earlier run whose process is gone left behind. */
function sweepStale(): void {
  for (const line of ip("netns", "list").split("\n")) {
    const name = line.split(" ")[0]!;
    const m = name.startsWith(NS_PREFIX) ? /^(\d+)-/.exec(name.slice(NS_PREFIX.length)) : null;
    if (m === null || alive(Number(m[1]))) continue;
    for (const pid of ip("netns", "pids", name).split("\n").filter(Boolean))
      quietly(() => process.kill(Number(pid), "SIGKILL"));
    quietly(() => ip("netns", "del", name));
  }
  // Bridges and veths (named after their bridge).
  for (const line of ip("-o", "link", "show").split("\n")) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
    const m = name?.startsWith(BR_PREFIX) ? /^(\d+)b/.exec(name.slice(BR_PREFIX.length)) : null;
    if (m && !alive(Number(m[1]))) quietly(() => ip("link", "del", name!));
  }
}

/** A detached shell that, once this process's end of its stdin closes (for
 * whatever reason), kills what runs in the namespaces and deletes them and
 * the bridge. Detached, so a Ctrl-C to the test's process group spares it. */
function janitor(namespaces: string[], veths: string[], bridge: string): void {
  const script = [
    "cat >/dev/null",
    // Deleted by name: a namespace whose sockets still retransmit lingers
    // after its last process, and its veths with it.
    `for v in ${veths.join(" ")}; do ip link del "$v" 2>/dev/null; done`,
    `for ns in ${namespaces.join(" ")}; do`,
    '  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p"; done',
    '  ip netns del "$ns" 2>/dev/null',
    "done",
    `ip link del ${bridge} 2>/dev/null`,
    "exit 0",
  ].join("\n");
  const child = spawn("sh", ["-c", script], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
}

export interface NetnsMeshOptions {
  heartbeatMs?: number;
  deadMs?: number;
  backoffMs?: number;
}

export interface NetnsMesh {
  instances: TestInstance[];
  /** `http://<address i>:8080/`: what peers dial, `aud`, `http.endpoint`. */
  endpoints: string[];
  namespaces: string[];
  bridge: string;
  timers: Required<NetnsMeshOptions>;
  /** Silently cut instance i off: its veth's bridge end down, so nothing
   * reaches it or leaves it and nobody is told (no RST, no FIN). */
  isolate(i: number): void;
  heal(): void;
  list(i: number): Promise<MeshListing>;
  /** Resolves once every instance lists every other as reachable. */
  waitLinked(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const meshes = new Set<NetnsMesh>();
afterEachFile(async () => {
  for (const m of meshes) await m.stop();
});
let made = 0;

export async function startNetnsMesh(n: number, opts: NetnsMeshOptions = {}): Promise<NetnsMesh> {
  sweepStale();
  const tag = `${process.pid}-${made}`;
  const bridge = `${BR_PREFIX}${process.pid}b${made++}`;
  const namespaces = Array.from({ length: n }, (_, i) => `${NS_PREFIX}${tag}-${i}`);
  const veths = namespaces.map((_, i) => `${bridge}v${i}`);
  // 10.213.x.0/24, x from the pid: concurrent runs sit on separate bridges
  // anyway; this only keeps the addresses apart in logs.
  const subnet = `10.213.${(process.pid % 250) + 1}`;
  const addresses = namespaces.map((_, i) => `${subnet}.${i + 2}`);
  const endpoints = addresses.map((a) => `http://${a}:${PUBLIC_PORT}/`);
  const timers = {
    heartbeatMs: opts.heartbeatMs ?? 200,
    deadMs: opts.deadMs ?? 1000,
    backoffMs: opts.backoffMs ?? 150,
  };
  janitor(namespaces, veths, bridge);

  const forwarders: ChildProcess[] = [];
  const instances: TestInstance[] = [];
  let stopped = false;
  const mesh: NetnsMesh = {
    instances,
    endpoints,
    namespaces,
    bridge,
    timers,
    isolate(i) {
      ip("link", "set", veths[i]!, "down");
    },
    heal() {
      for (const v of veths) ip("link", "set", v, "up");
    },
    list: (i) => adminFrame<MeshListing>(instances[i]!.socket, "admin_mesh_list"),
    async waitLinked(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lists = await Promise.all(instances.map((_, i) => mesh.list(i)));
        if (lists.every((l) => l.peers.length === n - 1 && l.peers.every((p) => p.reachable)))
          return;
        if (Date.now() > deadline)
          throw new Error(`mesh not linked after ${timeoutMs} ms: ${JSON.stringify(lists)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      meshes.delete(mesh);
      await Promise.all(instances.map((inst) => inst.stop()));
      await Promise.all(
        forwarders.map((f) => {
          const gone = new Promise((r) => f.once("exit", r));
          if (f.exitCode === null && f.signalCode === null) f.stdin?.end();
          else return undefined;
          return gone;
        }),
      );
      for (const v of veths) quietly(() => ip("link", "del", v));
      for (const ns of namespaces) quietly(() => ip("netns", "del", ns));
      quietly(() => ip("link", "del", bridge));
    },
  };
  meshes.add(mesh);

  try {
    ip("link", "add", bridge, "type", "bridge");
    ip("link", "set", bridge, "up");
    namespaces.forEach((ns, i) => {
      ip("netns", "add", ns);
      ip("link", "add", veths[i]!, "type", "veth", "peer", "name", "eth0", "netns", ns);
      ip("link", "set", veths[i]!, "master", bridge, "up");
      ip("-n", ns, "addr", "add", `${addresses[i]}/24`, "dev", "eth0");
      ip("-n", ns, "link", "set", "eth0", "up");
      ip("-n", ns, "link", "set", "lo", "up");
    });
    await Promise.all(
      namespaces.map(async (ns, i) => {
        const port = 9100 + i;
        forwarders.push(await forwarder(ns, `${addresses[i]}:${PUBLIC_PORT}`, `127.0.0.1:${port}`));
        const home = isolatedHome();
        const env = {
          ...home.env,
          CCMSG_TEST_MESH_HEARTBEAT_MS: String(timers.heartbeatMs),
          CCMSG_TEST_MESH_DEAD_MS: String(timers.deadMs),
          CCMSG_TEST_MESH_BACKOFF_MS: String(timers.backoffMs),
        };
        const config = configFile(undefined, env);
        mkdirSync(dirname(config), { recursive: true, mode: 0o700 });
        writeFileSync(config, JSON.stringify({ http: { endpoint: endpoints[i] } }), {
          mode: 0o600,
        });
        const stateDir = defaultStateDir(env);
        mkdirSync(stateDir, { recursive: true, mode: 0o700 });
        writePeersFile(
          join(stateDir, "mesh.json"),
          endpoints.filter((_, j) => j !== i).map((endpoint) => ({ endpoint })),
        );
        instances[i] = await startInstance({
          env,
          stateDir,
          args: ["--http", `127.0.0.1:${port}`],
          wrap: ["ip", "netns", "exec", ns],
        });
      }),
    );
  } catch (e) {
    await mesh.stop();
    throw e;
  }
  return mesh;
}

/** Start tcp-forward.mjs in `ns`; resolves once it listens. */
async function forwarder(ns: string, listen: string, target: string): Promise<ChildProcess> {
  const child = spawn("ip", ["netns", "exec", ns, process.execPath, FORWARDER, listen, target], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) =>
      reject(new Error(`forwarder in ${ns} exited (${code}): ${stderr}`)),
    );
  });
  return child;
}
