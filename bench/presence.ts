import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Pushed } from "../src/client/client.js";
import { startDaemon } from "./daemon.js";
import { cpuMs, median, percentile, round, rssMb } from "./measure.js";

// Presence from the harness's state files (issue 9, item 2): an instance whose
// config home holds 200 Claude Code state files of running processes, watched
// by a `peers` and an `agents` subscriber. What it costs at idle (nothing
// changes: only the 5 s confirmation poll runs), what a fresh read costs on
// the paths that wait for one, and that a send to a connected session reads
// nothing.

const SESSIONS = 200;
const IDLE_WINDOW_MS = 30_000;

interface Setup {
  dir: string;
  child: ChildProcess;
  pid: number;
  socket: string;
  sleepers: ChildProcess[];
  sids: string[];
}

function procStart(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19]!;
}

async function setup(sessions: number): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-presence-"));
  const home = join(dir, "claude");
  mkdirSync(join(home, "sessions"), { recursive: true });
  const sleepers: ChildProcess[] = [];
  const sids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const s = spawn("sleep", ["3600"], { stdio: "ignore" });
    await new Promise((r) => s.once("spawn", r));
    sleepers.push(s);
    const sid = randomUUID();
    sids.push(sid);
    const pid = s.pid!;
    writeFileSync(
      join(home, "sessions", `${pid}.json`),
      JSON.stringify({
        pid,
        sessionId: sid,
        cwd: `/home/dev/src/repo-${i}`,
        startedAt: Date.now(),
        procStart: procStart(pid),
        version: "2.1.328",
        peerProtocol: 1,
        kind: "interactive",
        entrypoint: "cli",
        tmux: `cc:@${i}.%${i}`,
        messagingSocketPath: `/tmp/cc-socks/${pid}.sock`,
        name: `session-${i}`,
        nameSource: "derived",
        status: "idle",
        updatedAt: Date.now(),
        statusUpdatedAt: Date.now(),
      }),
    );
  }
  const { child, pid, socket } = await startDaemon(join(dir, "state"), {
    HOME: dir,
    CLAUDE_CONFIG_DIR: home,
  });
  return { dir, child, pid, socket, sleepers, sids };
}

async function teardown(s: Setup): Promise<void> {
  const exited = new Promise((r) => s.child.once("exit", r));
  s.child.kill("SIGTERM");
  await exited;
  for (const p of s.sleepers) p.kill("SIGKILL");
  rmSync(s.dir, { recursive: true, force: true });
}

async function person(socket: string): Promise<Client> {
  const c = await Client.connectUnix(socket);
  await c.call("hello", { role: "user", protocol_version: 3 });
  return c;
}

/** Subscribe and wait for the snapshot; ms from the request. */
async function snapshotMs(c: Client, topic: string): Promise<{ ms: number; data: unknown }> {
  const t0 = performance.now();
  const snap = new Promise<Pushed>((resolve) => {
    const off = c.onPushed((p) => {
      if (p.topic === topic && p.snapshot) {
        off();
        resolve(p);
      }
    });
  });
  await c.call("topic_subscribe", { topic });
  const p = await snap;
  return { ms: performance.now() - t0, data: p.data };
}

/** Idle cost with `peers` and `agents` held: CPU over a window and RSS. */
async function idle(sessions: number) {
  const s = await setup(sessions);
  const watcher = await person(s.socket);
  const peers = await snapshotMs(watcher, "peers");
  const agents = await snapshotMs(watcher, "agents");
  const listed = (peers.data as { peers: unknown[] }).peers.length;
  const agentRows = (agents.data as { agents: unknown[] }).agents.length;
  let frames = 0;
  watcher.onPushed(() => {
    frames++;
  });
  // Settled: the pass after arming and the first frames are behind it.
  await new Promise((r) => setTimeout(r, 1000));
  frames = 0;
  const cpu0 = cpuMs(s.pid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
  const cpu = cpuMs(s.pid) - cpu0;
  const wall = performance.now() - t0;
  const out = {
    sessions,
    listed_in_peers: listed,
    listed_in_agents: agentRows,
    rss_mb: rssMb(s.pid),
    idle_window_s: round(wall / 1000),
    idle_cpu_ms: cpu,
    idle_cpu_percent: round((cpu / wall) * 100, 2),
    idle_cpu_ms_per_poll: round(cpu / (wall / 5000), 1),
    frames_at_idle: frames,
  };
  watcher.close();
  return { out, s };
}

/** What a fresh read costs where a decision waits for one: the first `peers`
 * frame, and a send to a session that holds no connection; beside a send to a
 * connected one, which reads nothing. */
async function freshReadCost(s: Setup) {
  const c = await person(s.socket);
  const first: number[] = [];
  for (let i = 0; i < 30; i++) {
    const sub = await Client.connectUnix(s.socket);
    await sub.call("hello", { role: "user", protocol_version: 3 });
    first.push((await snapshotMs(sub, "peers")).ms);
    sub.close();
  }
  const unconnected: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    await c.call("message_send", { to: s.sids[i % s.sids.length]!, text: `m${i}` });
    if (i >= 20) unconnected.push(performance.now() - t0);
  }
  // A connected recipient listening on its inbox: no read on the path.
  const B = randomUUID();
  const b = await Client.connectUnix(s.socket);
  await b.call("hello", { role: "session", protocol_version: 3, sid: B });
  await b.call("topic_subscribe", { topic: "inbox" });
  const connected: number[] = [];
  for (let i = 0; i < 1200; i++) {
    const t0 = performance.now();
    await c.call("message_send", { to: B, text: `c${i}` });
    if (i >= 200) connected.push((performance.now() - t0) * 1000);
  }
  b.close();
  c.close();
  return {
    first_peers_frame_ms: { p50: round(median(first), 2), p99: round(percentile(first, 99), 2) },
    send_to_unconnected_ack_ms: {
      p50: round(median(unconnected), 2),
      p99: round(percentile(unconnected, 99), 2),
    },
    send_to_connected_ack_us: {
      p50: round(median(connected)),
      p99: round(percentile(connected, 99)),
    },
  };
}

export async function benchPresence() {
  const baseline = await idle(0);
  await teardown(baseline.s);
  const loaded = await idle(SESSIONS);
  const fresh = await freshReadCost(loaded.s);
  await teardown(loaded.s);
  return {
    idle_without_sessions: baseline.out,
    idle_with_200_sessions: loaded.out,
    idle_cpu_percent_for_200_sessions: round(
      loaded.out.idle_cpu_percent - baseline.out.idle_cpu_percent,
      2,
    ),
    rss_mb_for_200_sessions: round(loaded.out.rss_mb - baseline.out.rss_mb),
    fresh_reads_with_200_sessions: fresh,
    targets: { idle_cpu_percent: "≈ 0", frames_at_idle: 0 },
  };
}
