import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pushed } from "../src/client/client.js";
import { Client } from "../src/client/client.js";
import type { MeshListing } from "../src/config/mesh.js";
import { writePeersFile } from "../src/config/mesh.js";
import { type Daemon, startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// KV across instances (DR-0049), three real instances linked through TCP
// proxies the bench can cut: how long after a partition heals the three agree
// again, for N keys written on both sides during it, and how long one write
// made on A takes to reach a `kv:<ns>` subscriber on C while all are linked.
// The instances run with the mesh's test timers (reconnect backoff 150 ms), so
// the figure is replication's, not the 5–60 s production backoff's; "linked"
// is the part spent getting the links back.

/** A loopback TCP proxy to one instance that can refuse everything. */
class LinkProxy {
  cut = false;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: number): Promise<LinkProxy> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const proxy = new LinkProxy(server, (server.address() as { port: number }).port);
    server.on("connection", (inbound) => {
      if (proxy.cut) return inbound.resetAndDestroy();
      const outbound = tcpConnect(target, "127.0.0.1");
      for (const [a, b] of [
        [inbound, outbound],
        [outbound, inbound],
      ] as const) {
        proxy.sockets.add(a);
        a.pipe(b);
        a.on("error", () => {});
        a.on("close", () => {
          proxy.sockets.delete(a);
          b.destroy();
        });
      }
    });
    return proxy;
  }

  setCut(cut: boolean): void {
    this.cut = cut;
    if (cut) for (const s of this.sockets) s.resetAndDestroy();
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Node {
  daemon: Daemon;
  client: Client;
  /** Keys of the bench namespace this instance's subscriber holds live. */
  keys: Set<string>;
}

/** The `kv:<ns>` snapshot an instance serves, as JSON text. */
async function snapshotOf(socket: string, ns: string): Promise<string> {
  const client = await Client.connectUnix(socket);
  try {
    await client.call("hello", { role: "user", protocol_version: 3 });
    const snap = new Promise<unknown>((resolve) =>
      client.onPushed((p) => {
        if (p.topic === `kv:${ns}` && p.snapshot === true) resolve(p.data);
      }),
    );
    await client.call("topic_subscribe", { topic: `kv:${ns}` });
    return JSON.stringify(await snap);
  } finally {
    client.close();
  }
}

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`bench mesh-kv: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export async function benchMeshKv() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-meshkv-"));
  const ports = await Promise.all([0, 1, 2].map(() => freePort()));
  const endpoints = ports.map((p) => `http://127.0.0.1:${p}/`);
  const proxies = new Map<string, LinkProxy>();
  for (const i of [0, 1, 2])
    for (const j of [0, 1, 2])
      if (i !== j) proxies.set(`${i}>${j}`, await LinkProxy.start(ports[j]!));
  const nodes: Node[] = [];
  try {
    for (const i of [0, 1, 2]) {
      const home = join(dir, `home-${i}`);
      const stateDir = join(dir, `state-${i}`);
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      writePeersFile(
        join(stateDir, "mesh.json"),
        endpoints.filter((_, j) => j !== i).map((endpoint) => ({ endpoint })),
      );
      const dial: Record<string, string> = {};
      for (const j of [0, 1, 2])
        if (j !== i) dial[endpoints[j]!] = `127.0.0.1:${proxies.get(`${i}>${j}`)!.port}`;
      const daemon = await startDaemon(
        stateDir,
        {
          HOME: home,
          CCMSG_TEST_MESH_HEARTBEAT_MS: "200",
          CCMSG_TEST_MESH_DEAD_MS: "1000",
          CCMSG_TEST_MESH_BACKOFF_MS: "150",
          CCMSG_TEST_MESH_DIAL: JSON.stringify(dial),
        },
        `127.0.0.1:${ports[i]}`,
        ["--test-hooks"],
      );
      const client = await Client.connectUnix(daemon.socket);
      await client.call("hello", { role: "user", protocol_version: 3 });
      nodes.push({ daemon, client, keys: new Set() });
    }
    const linked = async () => {
      const lists = await Promise.all(
        nodes.map(async (n) => {
          const { ok: _o, request_id: _r, ...l } = await n.client.send("admin_mesh_list", {});
          return l as unknown as MeshListing;
        }),
      );
      return lists.every((l) => l.peers.length === 2 && l.peers.every((p) => p.reachable));
    };
    const apart = async () => {
      const lists = await Promise.all(
        nodes.map(async (n) => {
          const { ok: _o, request_id: _r, ...l } = await n.client.send("admin_mesh_list", {});
          return l as unknown as MeshListing;
        }),
      );
      return (
        lists[0]!.peers.every((p) => !p.reachable) && lists[1]!.peers.some((p) => !p.reachable)
      );
    };
    await waitFor("the links", linked);

    // Subscribers: each instance's view of the namespace, kept live.
    let ns = "";
    for (const n of nodes) {
      n.client.onPushed((p: Pushed) => {
        const f = p as { topic?: string; data?: { entries?: { key: string; deleted?: true }[] } };
        if (f.topic !== `kv:${ns}` || f.data?.entries === undefined) return;
        for (const e of f.data.entries) e.deleted ? n.keys.delete(e.key) : n.keys.add(e.key);
      });
    }
    const watch = async (name: string) => {
      ns = name;
      for (const n of nodes) {
        n.keys.clear();
        await n.client.call("topic_subscribe", { topic: `kv:${name}` });
      }
    };

    // One write on A, seen by C's subscriber.
    await watch("latency");
    const samples: number[] = [];
    for (let k = 0; k < 60; k++) {
      const key = `k${k}`;
      const t0 = performance.now();
      await nodes[0]!.client.call("kv_write", { ns: "latency", key, value: { k } });
      await waitFor("the write on C", () => nodes[2]!.keys.has(key), 10_000);
      if (k >= 10) samples.push(performance.now() - t0);
    }
    const latency = {
      write_a_to_subscriber_c_ms: {
        median: round(median(samples), 2),
        p95: round(percentile(samples, 95), 2),
      },
    };

    const convergence: Record<string, unknown> = {};
    for (const n of [100, 1000, 10_000]) {
      await watch(`heal${n}`);
      // A alone on one side, B and C on the other; half the keys written on
      // each side.
      for (const j of [1, 2]) {
        proxies.get(`0>${j}`)!.setCut(true);
        proxies.get(`${j}>0`)!.setCut(true);
      }
      await waitFor("the partition", apart);
      const writes: Promise<unknown>[] = [];
      for (let k = 0; k < n; k++) {
        const at = k % 2 === 0 ? 0 : 1 + (k % 4 === 1 ? 0 : 1);
        writes.push(
          nodes[at]!.client.call("kv_write", { ns: `heal${n}`, key: `key-${k}`, value: { k, at } }),
        );
        if (writes.length >= 200) await Promise.all(writes.splice(0));
      }
      await Promise.all(writes);
      const t0 = performance.now();
      for (const p of proxies.values()) p.setCut(false);
      await waitFor("the links after the heal", linked);
      const linkedMs = performance.now() - t0;
      await waitFor("convergence", () => nodes.every((x) => x.keys.size === n));
      const convergedMs = performance.now() - t0;
      // Not timed: the three snapshots are the same, values and stamps.
      const snaps = await Promise.all(nodes.map((x) => snapshotOf(x.daemon.socket, `heal${n}`)));
      if (snaps.some((s) => s !== snaps[0]))
        throw new Error(`bench mesh-kv: the instances hold different ${n}-key snapshots`);
      convergence[`keys_${n}`] = {
        heal_to_identical_ms: round(convergedMs, 0),
        of_which_links_ms: round(linkedMs, 0),
      };
      for (const x of nodes) await x.client.call("topic_unsubscribe", { topic: `kv:heal${n}` });
    }
    return { ...latency, convergence_after_heal: convergence };
  } finally {
    for (const n of nodes) {
      n.client.close();
      n.daemon.child.kill("SIGTERM");
    }
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise((r) =>
            n.daemon.child.exitCode !== null ? r(0) : n.daemon.child.once("exit", r),
          ),
      ),
    );
    await Promise.all([...proxies.values()].map((p) => p.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}
