import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import { type Daemon, startDaemon } from "./daemon.js";
import { cpuMs, median, percentile, round, rssMb } from "./measure.js";

// `peers` under churn (issue 23, item 3). 5,000 sessions connect and leave
// while 10 people watch `peers`: what each watcher receives, what the instance
// spends, and how an idle client's pings fare meanwhile. Then memory around a
// burst: 1,000 connections sending 100 messages each, RSS before, at the peak
// and for 30 s after. Real instances on their Unix sockets; the churn comes
// from a process of its own.

const CHURN_SESSIONS = 5000;
const CHURN_RATE_PER_S = 250;
const CHURN_WINDOW = 50;
const WATCHERS = 10;
const BURST_CONNECTIONS = 1000;
const BURST_MESSAGES = 100;
const AFTER_BURST_MS = 30_000;
const PING_EVERY_MS = 2;

interface Running extends Daemon {
  dir: string;
}

async function start(): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-churn-"));
  return { dir, ...(await startDaemon(join(dir, "state"), { HOME: dir })) };
}

async function stop(r: Running): Promise<void> {
  const exited = new Promise((resolve) => r.child.once("exit", resolve));
  r.child.kill("SIGTERM");
  await exited;
  rmSync(r.dir, { recursive: true, force: true });
}

/** The `data` member of a topic frame line, as text (it is the last one). */
function dataOf(line: string): string {
  return line.slice(line.indexOf('"data":') + 7, -1);
}

/**
 * A `peers` subscriber on a raw socket that only counts what it receives and
 * keeps the last line: parsing a megabyte per frame here would load the
 * machine the instance runs on.
 */
class Watcher {
  bytes = 0;
  frames = 0;
  last = "";
  private partial = "";
  private changed: (() => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.take(chunk.toString()));
  }

  static async open(path: string): Promise<Watcher> {
    const socket = connect(path);
    await new Promise((r) => socket.once("connect", r));
    const w = new Watcher(socket);
    const snapshot = w.next((line) => line.includes('"snapshot":true'));
    socket.write('{"op":"hello","request_id":"h","role":"user","protocol_version":3}\n');
    socket.write('{"op":"topic_subscribe","request_id":"s","topic":"peers"}\n');
    await snapshot;
    return w;
  }

  private take(text: string): void {
    this.bytes += Buffer.byteLength(text);
    let from = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
      this.last = this.partial + text.slice(from, nl);
      this.partial = "";
      this.frames++;
      from = nl + 1;
    }
    this.partial += text.slice(from);
    if (from > 0) this.changed?.();
  }

  /** Resolves once the last line received satisfies `pred`. */
  next(pred: (line: string) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!pred(this.last)) return;
        this.changed = undefined;
        resolve();
      };
      this.changed = check;
      check();
    });
  }

  reset(): void {
    this.bytes = 0;
    this.frames = 0;
  }

  close(): void {
    this.socket.destroy();
  }
}

async function person(socket: string): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", { role: "user", protocol_version: 3 });
  return c;
}

/** Pings one at a time, one every PING_EVERY_MS at most (a client that asks
 * now and then, not load of its own), until `until()` says stop; µs each. */
async function pings(c: Client, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!until()) {
    const t0 = process.hrtime.bigint();
    await c.call("instance_ping", {});
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    out.push(us);
    await sleep(Math.max(0, PING_EVERY_MS - us / 1000));
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The instance's `peers` value now, once no session is connected. */
async function settledValue(socket: string): Promise<string> {
  for (let i = 0; ; i++) {
    const w = await Watcher.open(socket);
    const data = dataOf(w.last);
    w.close();
    if (data.startsWith('{"peers":[]') || i === 50) return data;
    await sleep(200);
  }
}

async function churn() {
  const r = await start();
  const watchers = await Promise.all(
    Array.from({ length: WATCHERS }, () => Watcher.open(r.socket)),
  );
  const pinger = await person(r.socket);
  await sleep(500);
  const t0 = performance.now();
  const idle = (await pings(pinger, () => performance.now() - t0 > 5000)).slice(100);
  for (const w of watchers) w.reset();
  const cpu0 = cpuMs(r.pid);
  const churnStart = performance.now();
  const load = fork(
    join(import.meta.dirname, "churn-sessions.mjs"),
    [r.socket, CHURN_SESSIONS, CHURN_RATE_PER_S, CHURN_WINDOW].map(String),
    { stdio: "inherit" },
  );
  let done: { ms: number; failed: number } | undefined;
  const finished = new Promise<void>((resolve) =>
    load.once("message", (m: { ms: number; failed: number }) => {
      done = m;
      resolve();
    }),
  );
  const during = await pings(pinger, () => done !== undefined);
  await finished;
  const churnEnd = performance.now();
  // The last frame each watcher gets must carry the final value (§5.5 pace).
  const final = await settledValue(r.socket);
  const reached = await Promise.race([
    Promise.all(watchers.map((w) => w.next((line) => dataOf(line) === final))).then(() => true),
    sleep(60_000).then(() => false),
  ]);
  const settledAt = performance.now();
  const cpu = cpuMs(r.pid) - cpu0;
  const finalValue = JSON.parse(final) as { peers: unknown[]; last_live: unknown[] };
  const bytes = watchers.map((w) => w.bytes);
  const frames = watchers.map((w) => w.frames);
  const seconds = (settledAt - churnStart) / 1000;
  pinger.close();
  for (const w of watchers) w.close();
  await stop(r);
  const idleP50 = median(idle);
  const idleP99 = percentile(idle, 99);
  const duringP50 = median(during);
  const duringP99 = percentile(during, 99);
  return {
    sessions: CHURN_SESSIONS,
    watchers: WATCHERS,
    churn_s: round(done!.ms / 1000, 1),
    sessions_failed: done!.failed,
    final_value_reached: reached,
    final_frame_after_churn_ms: round(settledAt - churnEnd, 0),
    final_last_live_rows: finalValue.last_live.length,
    final_frame_bytes: Buffer.byteLength(final),
    bytes_per_watcher_mb: round(median(bytes) / 2 ** 20, 2),
    bytes_per_watcher_max_mb: round(Math.max(...bytes) / 2 ** 20, 2),
    frames_per_watcher: median(frames),
    frames_per_watcher_per_s: round(median(frames) / seconds, 2),
    instance_cpu_s: round(cpu / 1000, 1),
    window_s: round(seconds, 1),
    ping_idle_us: { p50: round(idleP50), p99: round(idleP99), n: idle.length },
    ping_churn_us: { p50: round(duringP50), p99: round(duringP99), n: during.length },
    ping_p50_vs_idle: round(duringP50 / idleP50, 1),
    ping_p99_vs_idle: round(duringP99 / idleP99, 1),
  };
}

async function session(socket: string, sid: string): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", {
    ...{ role: "session", protocol_version: 3, sid },
    ...{ repo: "burst", ws: sid.slice(0, 8), cwd: "/burst" },
  });
  return c;
}

/** 1,000 sessions, each sending 100 messages to the next one at once while
 * 10 people watch `peers`; then they leave and the instance idles. */
async function burst() {
  const r = await start();
  const watchers = await Promise.all(
    Array.from({ length: WATCHERS }, () => Watcher.open(r.socket)),
  );
  await sleep(1500);
  const before = rssMb(r.pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(r.pid));
  }, 100);
  const sids = Array.from({ length: BURST_CONNECTIONS }, () => randomUUID());
  const clients: Client[] = [];
  for (let i = 0; i < sids.length; i += 50) {
    clients.push(...(await Promise.all(sids.slice(i, i + 50).map((s) => session(r.socket, s)))));
  }
  let received = 0;
  const expected = BURST_CONNECTIONS * BURST_MESSAGES;
  let allIn: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => {
    allIn = resolve;
  });
  for (const c of clients) {
    c.onPushed((p) => {
      if (p.topic !== "inbox" || p.snapshot) return;
      received += (p.data as unknown[]).length;
      if (received === expected) allIn?.();
    });
    await c.call("topic_subscribe", { topic: "inbox" });
  }
  const t0 = performance.now();
  let notDelivered = 0;
  await Promise.all(
    clients.flatMap((c, i) =>
      Array.from({ length: BURST_MESSAGES }, (_, k) =>
        c
          .request("message_send", { to: sids[(i + 1) % sids.length]!, text: `burst ${i}/${k}` })
          .then((reply) => {
            if (!reply.ok || reply.delivered !== true) notDelivered++;
          }),
      ),
    ),
  );
  await Promise.race([arrived, sleep(30_000)]);
  const burstMs = performance.now() - t0;
  for (const c of clients) c.close();
  const closedAt = performance.now();
  const after: number[] = [];
  let backWithin30Ms: number | undefined;
  while (performance.now() - closedAt < AFTER_BURST_MS) {
    await sleep(1000);
    const rss = rssMb(r.pid);
    after.push(rss);
    if (backWithin30Ms === undefined && rss <= before + 30)
      backWithin30Ms = round(performance.now() - closedAt, 0);
  }
  clearInterval(sampler);
  for (const w of watchers) w.close();
  await stop(r);
  return {
    connections: BURST_CONNECTIONS,
    messages_each: BURST_MESSAGES,
    watchers: WATCHERS,
    burst_s: round(burstMs / 1000, 1),
    not_delivered: notDelivered,
    inbox_frames_received: received,
    rss_before_mb: before,
    rss_peak_mb: peak,
    rss_after_30s_mb: after.at(-1),
    rss_after_mb_each_5s: after.filter((_, i) => i % 5 === 4),
    back_within_30mb_after_ms: backWithin30Ms ?? "not within 30 s",
  };
}

export async function benchChurn() {
  return {
    churn_5000: await churn(),
    burst_1000x100: await burst(),
    targets: {
      bytes_per_watcher_mb: 5,
      ping_p99_vs_idle: 10,
      rss_after_30s_over_before_mb: 30,
    },
  };
}
