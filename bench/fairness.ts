import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Daemon, startDaemon } from "./daemon.js";
import { median, percentile, round, rssMb } from "./measure.js";

// Fairness among connections (issue 23, items 2 and 10): one client's ping
// while nine others pipeline flat out, against the same ping with no load, and
// the memory slow senders leave behind. A real instance over its Unix socket;
// the load runs in a process of its own (flood.mjs), so its work never delays
// the client being measured. On a machine with few cores the pinger also
// waits for a core while the instance and the load both run flat out;
// `idle_beside_spinners` measures that share alone (an idle instance, two
// processes spinning). Every variant stops by itself after a few seconds.

const FLOODERS = 9;
const WINDOW = 1500;
const MEASURE_MS = 3000;
const PING = Buffer.from('{"op":"instance_ping","request_id":"p"}\n');

/** A raw socket that sends one ping at a time and times each reply. */
async function pinger(path: string) {
  const socket: Socket = connect(path);
  await new Promise((resolve) => socket.once("connect", resolve));
  let waiting: (() => void) | undefined;
  socket.on("data", (chunk: Buffer) => {
    if (chunk.includes(10)) waiting?.();
  });
  const one = async () => {
    const got = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    const t0 = process.hrtime.bigint();
    socket.write(PING);
    await got;
    return Number(process.hrtime.bigint() - t0) / 1000;
  };
  /** Ping back to back for `ms`; latencies in microseconds. */
  const run = async (ms: number) => {
    const samples: number[] = [];
    const until = performance.now() + ms;
    while (performance.now() < until) samples.push(await one());
    return samples;
  };
  return { run, close: () => socket.destroy() };
}

function summary(samples: number[]) {
  return {
    pings: samples.length,
    p50_us: round(median(samples)),
    p99_us: round(percentile(samples, 99)),
    max_us: round(Math.max(...samples)),
  };
}

function once<T>(child: ChildProcess, want?: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (want !== undefined && m !== want) return;
      child.off("message", on);
      resolve(m as T);
    };
    child.on("message", on);
  });
}

/** The pinger's latency while `FLOODERS` connections each keep `WINDOW`
 * requests of `mode` in flight, and the flooders' replies per second. */
async function underFlood(d: Daemon, mode: "valid" | "invalid", idleP99: number) {
  const flood = fork(join(import.meta.dirname, "flood.mjs"), [
    d.socket,
    String(FLOODERS),
    String(WINDOW),
    mode,
  ]);
  await once(flood, "ready");
  const p = await pinger(d.socket);
  flood.send("go");
  await new Promise((r) => setTimeout(r, 300)); // the flood reaches its pace
  flood.send("mark");
  const samples = await p.run(MEASURE_MS);
  const done = once<{ replies: number; ms: number }>(flood);
  flood.send("stop");
  const { replies, ms } = await done;
  await new Promise((r) => flood.once("exit", r));
  p.close();
  const s = summary(samples);
  return {
    ...s,
    p99_over_idle_p99: round(s.p99_us / idleP99, 1),
    flooders: FLOODERS,
    in_flight_each: WINDOW,
    flooders_replies_per_s: round(replies / (ms / 1000), 0),
  };
}

/** 300 connections each trickle a frame of just under 1 MiB (4 KiB every
 * 10 ms) and close — before its last bytes (`answered` false) or once it is
 * answered: the instance's resident memory before, with every frame in, and
 * each second for 3 s after they closed. */
async function slowSenders(d: Daemon, answered: boolean) {
  const n = 300;
  const piece = 4096;
  const head = '{"op":"instance_ping","request_id":"s","pad":"';
  const whole = Buffer.from(`${head}${"x".repeat(1024 * 1024 - 100 - head.length)}"}\n`);
  const frame = answered ? whole : whole.subarray(0, whole.length - 1024);
  const before = rssMb(d.pid);
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve) => {
          const s = connect(d.socket, () => resolve(s));
          s.on("error", () => {});
        }),
    ),
  );
  const replies = sockets.map(
    (s) => new Promise<void>((resolve) => s.once("data", () => resolve())),
  );
  let peak = 0;
  for (let at = 0; at < frame.length; at += piece) {
    for (const s of sockets) s.write(frame.subarray(at, at + piece));
    if (at + piece >= frame.length - 64 * 1024) peak = Math.max(peak, rssMb(d.pid));
    await new Promise((r) => setTimeout(r, 10));
  }
  if (answered) await Promise.all(replies);
  else await new Promise((r) => setTimeout(r, 200)); // the last pieces are read
  peak = Math.max(peak, rssMb(d.pid));
  for (const s of sockets) s.destroy();
  const after: number[] = [];
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    after.push(rssMb(d.pid));
  }
  return {
    connections: n,
    frame_bytes: whole.length,
    rss_before_mb: before,
    rss_with_frames_in_mb: peak,
    rss_after_close_mb: after,
    kept_after_close_mb: round(after[after.length - 1]! - before),
  };
}

/** The same pinger to an idle instance while two processes spin: what the
 * machine's scheduler alone does to the ratio when two busy processes (a
 * flooded instance and its load) share its cores with the pinger. */
async function besideSpinners(d: Daemon, idleP99: number) {
  const spinners = [0, 1].map(() =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  try {
    const p = await pinger(d.socket);
    await new Promise((r) => setTimeout(r, 200));
    const s = summary(await p.run(MEASURE_MS));
    p.close();
    return { ...s, p99_over_idle_p99: round(s.p99_us / idleP99, 1), spinning_processes: 2 };
  } finally {
    for (const child of spinners) child.kill("SIGKILL");
  }
}

async function withDaemon<T>(fn: (d: Daemon) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-fair-"));
  const d = await startDaemon(dir, { HOME: dir });
  try {
    return await fn(d);
  } finally {
    const exited = new Promise((r) => d.child.once("exit", r));
    d.child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchFairness() {
  const pings = await withDaemon(async (d) => {
    const p = await pinger(d.socket);
    await p.run(500); // warm the JIT on both sides
    const idle = summary(await p.run(MEASURE_MS));
    p.close();
    return {
      idle,
      valid_flood: await underFlood(d, "valid", idle.p99_us),
      invalid_json_flood: await underFlood(d, "invalid", idle.p99_us),
      idle_beside_spinners: await besideSpinners(d, idle.p99_us),
    };
  });
  return {
    ...pings,
    // Each on an instance of its own, so nothing before it is in the figures.
    slow_senders_closing_mid_frame: await withDaemon((d) => slowSenders(d, false)),
    slow_senders_answered: await withDaemon((d) => slowSenders(d, true)),
    targets: { p99_over_idle_p99: 10, flooders_throughput_vs_before: 0.8 },
  };
}
