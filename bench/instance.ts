import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Client, type Pushed } from "../src/client/client.js";
import { DAEMON_NODE_FLAGS, daemonEnv } from "../src/client/daemon-launch.js";
import { type LegacyInboxRow, putLegacyRows } from "../src/store/migrations/0015-inbox-compact.js";
import { CLI, startDaemon } from "./daemon.js";
import { cpuMs, median, percentile, round, rssMb } from "./measure.js";

// Benchmarks of the instance (issue 3), each against a real instance process
// over its real Unix socket. Every figure is a wall-clock measurement on this
// machine; targets are reported beside them, never asserted in tests.

interface Running {
  child: ChildProcess;
  dir: string;
  socket: string;
  pid: number;
  /** e.g. `http://127.0.0.1:41233/`, when started with HTTP. */
  http?: string;
}

async function start(
  dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-")),
  http = "off",
): Promise<Running> {
  return { dir, ...(await startDaemon(dir, { HOME: dir }, http)) };
}

async function stop(r: Running, keep = false): Promise<void> {
  const exited = new Promise((resolve) => r.child.once("exit", resolve));
  r.child.kill("SIGTERM");
  await exited;
  if (!keep) rmSync(r.dir, { recursive: true, force: true });
}

export async function session(socket: string, sid: string = randomUUID()): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", {
    role: "session",
    protocol_version: 3,
    sid,
    repo: "bench",
    ws: sid.slice(0, 8),
    cwd: "/bench",
  });
  return c;
}

async function person(socket: string): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", { role: "user", protocol_version: 3 });
  return c;
}

async function inboxListener(
  socket: string,
  sid: string,
): Promise<{ client: Client; frames: (cb: (p: Pushed) => void) => void }> {
  const client = await session(socket, sid);
  const listeners: ((p: Pushed) => void)[] = [];
  client.onPushed((p) => {
    if (p.topic === "inbox" && !p.snapshot) for (const l of listeners) l(p);
  });
  await client.call("topic_subscribe", { topic: "inbox" });
  return { client, frames: (cb) => listeners.push(cb) };
}

/** A→B one message at a time: from writing the request to B holding the frame
 * (one-way), and to A holding its reply (send → acknowledgement: the reply
 * waits for the message's row to be committed). Given the instance's pid, also
 * the CPU it spent per message (user + system, one in flight). */
export async function latency(socket: string, pid?: number) {
  const B = randomUUID();
  const b = await inboxListener(socket, B);
  const a = await session(socket);
  let arrived: (() => void) | undefined;
  b.frames(() => arrived?.());
  const samples: number[] = [];
  const acks: number[] = [];
  let cpuFrom = 0;
  for (let i = 0; i < 2200; i++) {
    if (i === 200 && pid !== undefined) cpuFrom = cpuMs(pid);
    const got = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const t0 = process.hrtime.bigint();
    const reply = a
      .request("message_send", { to: B, text: `m${i}` })
      .then(() => Number(process.hrtime.bigint() - t0) / 1000);
    await got;
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    const ack = await reply;
    if (i >= 200) {
      // the first 200 warm the JIT
      samples.push(us);
      acks.push(ack);
    }
  }
  const cpu = pid === undefined ? undefined : cpuMs(pid) - cpuFrom;
  a.close();
  b.client.close();
  return {
    messages: samples.length,
    p50_us: round(median(samples)),
    p99_us: round(percentile(samples, 99)),
    ack_p50_us: round(median(acks)),
    ack_p99_us: round(percentile(acks, 99)),
    ...(cpu === undefined
      ? {}
      : { daemon_cpu_us_per_message: round((cpu * 1000) / samples.length) }),
  };
}

/** A→B one at a time to a session that is not connected: the message is held,
 * and the acknowledgement waits for its row to be committed. */
async function heldAckLatency(socket: string) {
  const B = randomUUID();
  (await session(socket, B)).close();
  const a = await session(socket);
  const acks: number[] = [];
  // Below the per-recipient bound (256), so nothing is dropped on the way.
  for (let i = 0; i < 250; i++) {
    const t0 = process.hrtime.bigint();
    await a.call("message_send", { to: B, text: `h${i}` });
    if (i >= 50) acks.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  a.close();
  return {
    messages: acks.length,
    p50_us: round(median(acks)),
    p99_us: round(percentile(acks, 99)),
  };
}

/** The same two hops through a trivial relay process: the floor this machine
 * puts under any one-way latency; and one connection's bytes echoed back by
 * the same process, the floor under send → acknowledgement. */
export async function transportFloor() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-floor-"));
  const path = join(dir, "echo.sock");
  const child = fork(join(import.meta.dirname, "echo-server.mjs"), [path], { stdio: "ignore" });
  await new Promise((r) => child.once("message", r));
  const open = async () => {
    const s = connect(path);
    await new Promise((r) => s.once("connect", r));
    return s;
  };
  const b = await open();
  b.write("B\n");
  const a = await open();
  await new Promise((r) => setTimeout(r, 20));
  const e = await open();
  e.write("E\n");
  await new Promise((r) => setTimeout(r, 20));
  const line = (i: number) =>
    `${JSON.stringify({ op: "message_send", request_id: String(i), to: "x", text: `m${i}` })}\n`;
  const samples: number[] = [];
  const echoes: number[] = [];
  for (let i = 0; i < 2200; i++) {
    const got = new Promise((r) => b.once("data", r));
    const t0 = process.hrtime.bigint();
    a.write(line(i));
    await got;
    if (i >= 200) samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  for (let i = 0; i < 2200; i++) {
    const got = new Promise((r) => e.once("data", r));
    const t0 = process.hrtime.bigint();
    e.write(line(i));
    await got;
    if (i >= 200) echoes.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  a.destroy();
  b.destroy();
  e.destroy();
  child.kill();
  rmSync(dir, { recursive: true, force: true });
  return {
    p50_us: round(median(samples)),
    p99_us: round(percentile(samples, 99)),
    echo_round_trip_p50_us: round(median(echoes)),
  };
}

/** 20,000 pipelined sends to a listening recipient, rate per tenth. With
 * `window` Infinity every send is in flight at once (a burst): the instance
 * must pace the sender, not drop or refuse for a recipient that reads. */
export async function throughput(socket: string, window = 256) {
  const B = randomUUID();
  const b = await inboxListener(socket, B);
  let received = 0;
  b.frames(() => {
    received++;
  });
  const a = await session(socket);
  const n = 20_000;
  const done: number[] = new Array(n);
  let notDelivered = 0;
  let next = 0;
  const t0 = performance.now();
  // Pipelined with a bounded window, as a real client keeps requests in
  // flight; the recipient shares this process and must keep reading too.
  await new Promise<void>((resolve) => {
    let inFlight = 0;
    const pump = () => {
      while (inFlight < window && next < n) {
        const i = next++;
        inFlight++;
        void a.request("message_send", { to: B, text: `message ${i}` }).then((r) => {
          if (!r.ok || r.delivered !== true) notDelivered++;
          done[i] = performance.now();
          inFlight--;
          if (next === n && inFlight === 0) resolve();
          else pump();
        });
      }
    };
    pump();
  });
  const total = performance.now() - t0;
  // Frames the acknowledgements overtook are still on their way.
  for (let k = 0; k < 200 && received < n; k++) await new Promise((r) => setTimeout(r, 10));
  const tenth = n / 10;
  const rate = (k: number) => {
    const from = k === 0 ? t0 : done[k * tenth - 1]!;
    return round(tenth / ((done[(k + 1) * tenth - 1]! - from) / 1000), 0);
  };
  a.close();
  b.client.close();
  const first = rate(0);
  const last = rate(9);
  return {
    messages: n,
    overall_msgs_per_s: round(n / (total / 1000), 0),
    first_tenth_msgs_per_s: first,
    last_tenth_msgs_per_s: last,
    last_vs_first: round(last / first, 2),
    in_flight_window: Number.isFinite(window) ? window : "none",
    not_delivered: notDelivered,
    delivered_frames_seen: received,
  };
}

/**
 * Another process holds the database's write lock for a second while one
 * send to a lost session waits to be stored: pings must go on answering at
 * once (nothing on a connected path waits on a lock). Then the lock is let go
 * and the held send completes.
 */
async function underForeignLock(r: Running) {
  const a = await session(r.socket);
  const lost = randomUUID();
  (await session(r.socket, lost)).close();
  const holder = fork(join(import.meta.dirname, "..", "test", "helpers", "lock-holder.mjs"), [
    join(r.dir, "ccmsg.db"),
  ]);
  await new Promise((resolve) => holder.once("message", resolve));
  const pending = a.request("message_send", { to: lost, text: "waits for the lock" });
  const pings: number[] = [];
  const health: number[] = [];
  // Every HTTP route wants the owner's credential (docs/10-security.md, "Who may connect").
  const owner = readFileSync(join(r.dir, "owner.secret"), "utf8").trim();
  const headers = { authorization: `Bearer ${owner}` };
  const until = performance.now() + 1000;
  while (performance.now() < until) {
    let t0 = process.hrtime.bigint();
    await a.call("instance_ping", {});
    pings.push(Number(process.hrtime.bigint() - t0) / 1000);
    t0 = process.hrtime.bigint();
    await fetch(`${r.http}api/health`, { headers }).then((res) => res.arrayBuffer());
    health.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  holder.send("release");
  const reply = await pending;
  a.close();
  return {
    pings: pings.length,
    ping_p50_us: round(median(pings)),
    ping_p99_us: round(percentile(pings, 99)),
    health_p50_ms: round(median(health), 2),
    health_p99_ms: round(percentile(health, 99), 2),
    held_send_after_release: reply.ok ? (reply.reason ?? "delivered") : reply.error?.code,
  };
}

/** Hold 20,000 messages for 100 other (lost) sessions. */
async function holdForOthers(socket: string, total: number) {
  const a = await session(socket);
  const others: string[] = [];
  for (let i = 0; i < 100; i++) {
    const sid = randomUUID();
    const c = await session(socket, sid);
    c.close();
    others.push(sid);
  }
  await new Promise((r) => setTimeout(r, 50));
  await Promise.all(
    Array.from({ length: total }, (_, i) =>
      a.call("message_send", { to: others[i % others.length]!, text: `held ${i}` }),
    ),
  );
  a.close();
}

/** One notify_send fanned out to 50 subscribers: until the last one has it. */
async function fanout(socket: string) {
  const subs = await Promise.all(Array.from({ length: 50 }, () => person(socket)));
  let pending = 0;
  let allIn: (() => void) | undefined;
  for (const s of subs) {
    s.onPushed((p) => {
      if (p.topic === "notify" && --pending === 0) allIn?.();
    });
    await s.call("topic_subscribe", { topic: "notify" });
  }
  const sender = await session(socket);
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) {
    pending = subs.length;
    const all = new Promise<void>((resolve) => {
      allIn = resolve;
    });
    const t0 = process.hrtime.bigint();
    void sender.request("notify_send", { text: `n${i}` });
    await all;
    if (i >= 50) samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  sender.close();
  for (const s of subs) s.close();
  return {
    subscribers: 50,
    p50_us: round(median(samples)),
    p99_us: round(percentile(samples, 99)),
  };
}

/** 1,000 sessions connected while 10 people watch peers. */
async function manySessions(r: Running) {
  const watchers = await Promise.all(Array.from({ length: 10 }, () => person(r.socket)));
  let frames = 0;
  let lastCount = 0;
  let settled: (() => void) | undefined;
  for (const w of watchers) {
    w.onPushed((p) => {
      if (p.topic !== "peers") return;
      frames++;
      const n = (p.data as { peers: unknown[] }).peers.length;
      if (n === 1000) {
        lastCount++;
        if (lastCount === watchers.length) settled?.();
      }
    });
    await w.call("topic_subscribe", { topic: "peers" });
  }
  const rssBefore = rssMb(r.pid);
  const done = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const t0 = performance.now();
  const sessions: Client[] = [];
  for (let i = 0; i < 1000; i += 50) {
    sessions.push(...(await Promise.all(Array.from({ length: 50 }, () => session(r.socket)))));
  }
  await done;
  const connectMs = performance.now() - t0;
  const rss = rssMb(r.pid);
  for (const s of sessions) s.close();
  for (const w of watchers) w.close();
  return {
    sessions: 1000,
    peers_subscribers: 10,
    connect_all_ms: round(connectMs),
    peers_frames_sent: frames,
    rss_mb: rss,
    rss_before_mb: rssBefore,
  };
}

/** Spawn to the first answered request, `runs` times, on an existing state dir. */
export async function spawnToFirstReply(
  dir: string,
  runs: number,
  http = "off",
): Promise<number[]> {
  const samples: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [...DAEMON_NODE_FLAGS, CLI, "daemon", "run", "--state-dir", dir, "--http", http],
      {
        stdio: "ignore",
        env: daemonEnv({ PATH: process.env.PATH, HOME: dir }),
      },
    );
    const socket = join(dir, "ccmsg.sock");
    for (;;) {
      try {
        const c = await Client.connectUnix(socket);
        await c.call("instance_ping");
        c.close();
        break;
      } catch {
        await new Promise((res) => setTimeout(res, 1));
      }
    }
    samples.push(performance.now() - t0);
    const exited = new Promise((res) => child.once("exit", res));
    child.kill("SIGTERM");
    await exited;
  }
  return samples;
}

/** Restart, empty and with 100,000 held messages: spawn to the first answered
 * request, next to a bare node's start on the same machine at the same time. */
async function restart() {
  const r = await start();
  await stop(r, true);
  const empty = await spawnToFirstReply(r.dir, 9);
  const db = new Database(join(r.dir, "ccmsg.db"));
  const instance = readFileSync(join(r.dir, "instance.id"), "utf8").trim();
  const now = Date.now();
  const rows: LegacyInboxRow[] = [];
  db.transaction(() => {
    for (let i = 1; i <= 100_000; i++) {
      const sid = `00000000-0000-4000-8000-${String(i % 400).padStart(12, "0")}`;
      const message = {
        mid: `${instance}/${i}`,
        from: "user",
        from_label: "user",
        text: `held ${i}`,
        sent_at: now,
      };
      rows.push({ counter: i, sid, state: "held", message: JSON.stringify(message), sent_at: now });
    }
    putLegacyRows(db, rows);
  })();
  db.close();
  const held = await spawnToFirstReply(r.dir, 9);
  const node = timeCommand(["-e", "0"], 9);
  rmSync(r.dir, { recursive: true, force: true });
  return {
    empty_spawn_to_first_reply_ms: round(median(empty)),
    held_messages: 100_000,
    spawn_to_first_reply_ms: round(median(held)),
    bare_node_ms: node,
    over_bare_node_ms: round(median(held) - node),
  };
}

/** Resident memory of an idle instance just started, with HTTP on loopback
 * (the `npm start` shape) and socket-only. */
async function idleRss() {
  const out: Record<string, number> = {};
  for (const http of ["127.0.0.1:0", "off"]) {
    const samples: number[] = [];
    for (let k = 0; k < 3; k++) {
      const r = await start(undefined, http);
      // Settled: startup's work (log, HTTP, compaction) is behind it.
      await new Promise((res) => setTimeout(res, 1500));
      samples.push(rssMb(r.pid));
      await stop(r);
    }
    out[http === "off" ? "socket_only_rss_mb" : "with_http_rss_mb"] = median(samples);
  }
  return out;
}

/** Median wall time of a command. The environment is explicit and minimal on
 * both sides of a comparison: this process runs under tsx, whose
 * NODE_OPTIONS would otherwise slow the "bare node" baseline. */
export function timeCommand(
  args: string[],
  runs: number,
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH },
): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, args, { env, stdio: "ignore" });
    samples.push(performance.now() - t0);
  }
  return round(median(samples));
}

/** A cold `ccmsg post` against a running instance, next to a bare node. */
export async function coldPost(r: { dir: string; socket: string }) {
  const B = randomUUID();
  const b = await session(r.socket, B);
  const env = {
    PATH: process.env.PATH,
    CCMSG_STATE_DIR: r.dir,
    CLAUDE_CODE_SESSION_ID: randomUUID(),
  };
  timeCommand([CLI, "post", B, "warm"], 3, env);
  const node = timeCommand(["-e", "0"], 20);
  const post = timeCommand([CLI, "post", B, "hello"], 20, env);
  b.close();
  return { bare_node_ms: node, ccmsg_post_ms: post, over_bare_node_ms: round(post - node) };
}

export async function benchInstance() {
  const r = await start();
  const out: Record<string, unknown> = {};
  out.one_way_latency = await latency(r.socket);
  out.held_ack_latency = await heldAckLatency(r.socket);
  out.one_way_transport_floor = await transportFloor();
  out.throughput = await throughput(r.socket);
  out.burst_without_window = await throughput(r.socket, Number.POSITIVE_INFINITY);
  await holdForOthers(r.socket, 20_000);
  out.throughput_with_20000_held = await throughput(r.socket);
  out.notify_fanout_50 = await fanout(r.socket);
  out.cold_post = await coldPost(r);
  await stop(r);
  const big = await start();
  out.sessions_1000 = await manySessions(big);
  await stop(big);
  out.restart = await restart();
  out.idle = await idleRss();
  const locked = await start(undefined, "127.0.0.1:0");
  out.foreign_lock = await underForeignLock(locked);
  await stop(locked);
  out.targets = {
    one_way_p50_us: 100,
    one_way_p99_us: 1000,
    throughput_msgs_per_s: 30_000,
    burst_not_delivered: 0,
    health_under_lock_p99_ms: 5,
    last_tenth_within: 0.8,
    fanout_ms: 1,
    send_ack_p50_us: 110,
    restart_ms: 60,
    idle_rss_mb: 45,
    rss_mb_at_1000_sessions: 150,
    cold_post_over_node_ms: 25,
  };
  return out;
}
