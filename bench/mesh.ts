import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Pushed } from "../src/client/client.js";
import { writePeersFile } from "../src/config/mesh.js";
import { type Daemon, startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// Across instances (DR-0048): three real instances linked over loopback.
// One-way message latency from a session to a session listening on `inbox`,
// on the same instance and on another one; then a relay storm — sessions
// connecting and leaving fast on two instances while a person on the third
// watches `peers` — counting the frames that reach the person and timing
// `instance_ping` on the watched instance meanwhile.

interface Node extends Daemon {
  dir: string;
  endpoint: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startThree(): Promise<Node[]> {
  const ports = await Promise.all([0, 1, 2].map(() => freePort()));
  const endpoints = ports.map((p) => `http://127.0.0.1:${p}/`);
  return Promise.all(
    ports.map(async (port, i) => {
      const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-mesh-"));
      const state = join(dir, "state");
      mkdirSync(state, { recursive: true, mode: 0o700 });
      writePeersFile(
        join(state, "mesh.json"),
        endpoints.filter((_, j) => j !== i).map((endpoint) => ({ endpoint })),
      );
      const env = { HOME: dir, XDG_CONFIG_HOME: join(dir, "config") };
      const d = await startDaemon(state, env, `127.0.0.1:${port}`);
      return { ...d, dir, endpoint: endpoints[i]! };
    }),
  );
}

async function person(socket: string): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", { role: "user", protocol_version: 3 });
  return c;
}

async function session(socket: string, sid = randomUUID()): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", { role: "session", protocol_version: 3, sid, cwd: "/bench" });
  return c;
}

/** Resolves once `watcher`'s `peers` shows `sid` in a frame from `instance`. */
function seen(watcher: Client, instance: string, sid: string): Promise<void> {
  return new Promise((resolve) => {
    watcher.onPushed((p) => {
      if (p.topic !== "peers" || p.instance !== instance) return;
      if ((p.data as { peers: { sid: string }[] }).peers.some((r) => r.sid === sid)) resolve();
    });
  });
}

async function instanceId(socket: string): Promise<string> {
  const c = await Client.connectUnix(socket);
  const r = (await c.call("instance_ping", {})) as { instance: string };
  c.close();
  return r.instance;
}

/** Until every instance has a link to both others. */
async function linked(nodes: Node[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lists = await Promise.all(
      nodes.map(async (n) => {
        const c = await Client.connectUnix(n.socket);
        const r = await c.send("admin_mesh_list", {});
        c.close();
        return r as unknown as { peers: { reachable: boolean }[] };
      }),
    );
    if (lists.every((l) => l.peers?.length === 2 && l.peers.every((p) => p.reachable))) return;
    if (Date.now() > deadline) throw new Error("the mesh did not link");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One message at a time from `from` to `to`, which listens on `inbox`. */
async function oneWay(from: Client, to: Listener, n: number) {
  let arrived: (() => void) | undefined;
  to.client.onPushed((p: Pushed) => {
    if (p.topic === "inbox" && !p.snapshot) arrived?.();
  });
  const { sid } = to;
  const samples: number[] = [];
  for (let i = 0; i < n + 100; i++) {
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const t0 = process.hrtime.bigint();
    const reply = from.call("message_send", { to: sid, text: `m${i}` });
    await got;
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    await reply;
    if (i >= 100) samples.push(us); // the first 100 warm up
  }
  return {
    messages: samples.length,
    p50_us: round(median(samples)),
    p99_us: round(percentile(samples, 99)),
  };
}

interface Listener {
  client: Client;
  sid: string;
}

async function listener(socket: string, sid = randomUUID()): Promise<Listener> {
  const client = await session(socket, sid);
  await client.call("topic_subscribe", { topic: "inbox" });
  return { client, sid };
}

async function pings(socket: string, until: () => boolean): Promise<number[]> {
  const c = await Client.connectUnix(socket);
  const out: number[] = [];
  while (!until()) {
    const t0 = process.hrtime.bigint();
    await c.call("instance_ping", {});
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
    await new Promise((r) => setTimeout(r, 5));
  }
  c.close();
  return out;
}

export async function benchMesh() {
  const nodes = await startThree();
  try {
    await linked(nodes);
    const [a, b, c] = nodes as [Node, Node, Node];
    const ids = await Promise.all(nodes.map((n) => instanceId(n.socket)));
    const watcher = await person(a.socket);
    await watcher.call("topic_subscribe", { topic: "peers" });

    const sender = await session(a.socket);
    const here = await listener(a.socket);
    const local = await oneWay(sender, here, 1000);
    const far = randomUUID();
    const known = seen(watcher, ids[2]!, far);
    const there = await listener(c.socket, far);
    await known;
    const across = await oneWay(sender, there, 1000);

    // Relay storm.
    let rounds = 0;
    const atRest = await pings(a.socket, () => ++rounds > 200);
    let frames = 0;
    watcher.onPushed((p) => {
      if (p.topic === "peers" && p.instance !== ids[0]) frames++;
    });
    const perInstance = 300;
    let done = false;
    const started = performance.now();
    const during = pings(a.socket, () => done);
    await Promise.all(
      [b, c].map(async (n) => {
        for (let i = 0; i < perInstance; i++) (await session(n.socket)).close();
      }),
    );
    const stormMs = performance.now() - started;
    // Let the last values arrive.
    await new Promise((r) => setTimeout(r, 500));
    done = true;
    const pingDuring = await during;
    return {
      message_one_way_local: local,
      message_one_way_across: across,
      relay_storm: {
        sessions_connected_and_left: 2 * perInstance,
        row_changes: 4 * perInstance,
        storm_ms: round(stormMs),
        peers_frames_to_watcher: frames,
        ping_at_rest_p50_us: round(median(atRest)),
        ping_at_rest_p99_us: round(percentile(atRest, 99)),
        ping_during_p50_us: round(median(pingDuring)),
        ping_during_p99_us: round(percentile(pingDuring, 99)),
      },
    };
  } finally {
    for (const n of nodes) {
      const exited = new Promise((r) => n.child.once("exit", r));
      n.child.kill("SIGTERM");
      await exited;
      rmSync(n.dir, { recursive: true, force: true });
    }
  }
}
