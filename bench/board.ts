import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { upsertWorkItem } from "../src/board/board.js";
import { openStateStore } from "../src/store/migrated-store.js";
import { CLI, startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// Benchmarks of the operator surfaces (issue 4), against real processes.

const ENV = { PATH: process.env.PATH };

/** Fill a store with `n` work items of mixed lanes and owners. */
function fill(dbPath: string, n: number, from = 0): void {
  const store = openStateStore(dbPath);
  const statuses = ["open", "running", "blocked", "done", "needs-review"];
  for (let i = from; i < from + n; i++) {
    upsertWorkItem(store, {
      id: `item-${i}`,
      title: `work item ${i}`,
      status: statuses[i % statuses.length],
      priority: i % 7 === 0 ? "high" : "normal",
      // Open items (every fifth) start unowned, so the claim rounds can take them.
      owner: i % 3 === 0 && i % 5 !== 0 ? `owner-${i % 11}` : null,
      metadata: { assigneeKind: i % 2 ? "agent" : "human", branch: `b-${i}` },
    });
  }
  store.close();
}

/** Per-upsert cost through the store module as the table grows. */
function upsertCost() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-board-"));
  const path = join(dir, "ccmsg.db");
  const store = openStateStore(path);
  const out: Record<string, number> = {};
  // Warm the JIT and SQLite's caches on a throwaway table size first, so the
  // first size measured is not the one paying for them.
  for (let i = 0; i < 300; i++) upsertWorkItem(store, { id: `warm-${i}`, title: "warm" });
  let have = 300;
  for (const size of [200, 2000, 6000]) {
    // Grow to `size`, timing the last 200 upserts (new rows) at that size.
    while (have < size - 200) {
      upsertWorkItem(store, { id: `grow-${have}`, title: `grow ${have}` });
      have++;
    }
    const samples: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      upsertWorkItem(store, {
        id: `grow-${have}`,
        title: `grow ${have}`,
        status: "open",
        priority: "high",
      });
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
      have++;
    }
    out[`items_${size}_ms`] = round(median(samples), 3);
  }
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

async function start(dir: string): Promise<{ child: ChildProcess; http: string }> {
  const { child, http } = await startDaemon(dir, { HOME: dir }, "127.0.0.1:0");
  // Every HTTP route wants the owner's credential (docs/10-security.md, "Who may connect").
  OWNER.authorization = `Bearer ${readFileSync(join(dir, "owner.secret"), "utf8").trim()}`;
  return { child, http: http! };
}

const OWNER: Record<string, string> = {};

async function timed(url: string, init?: RequestInit): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { ...init, headers: { ...OWNER, ...(init?.headers ?? {}) } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return performance.now() - t0;
}

/** Claims and moves over HTTP at concurrency 1 and 2. */
async function mutations(http: string) {
  const post = (body: unknown) => ({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out: Record<string, unknown> = {};
  for (const concurrency of [1, 2]) {
    for (const action of ["claim", "move"] as const) {
      const samples: number[] = [];
      const n = 300;
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            const i = next++;
            // Items whose index is a multiple of 5 start open; owner names
            // depend on the index only, so a later round re-claims as the
            // same owner, which the board allows.
            const id = `item-${i * 5}`;
            const init =
              action === "claim"
                ? post({ owner: `bench-${i}`, as: "agent" })
                : post({ lane: i % 2 ? "blocked" : "ready" });
            samples.push(await timed(`${http}api/work-items/${id}/${action}`, init));
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      out[`${action}_c${concurrency}`] = {
        p50_ms: round(median(samples), 2),
        p99_ms: round(percentile(samples, 99), 2),
        req_per_s: round(n / seconds, 0),
      };
    }
  }
  return out;
}

/** 400 health checks while four pollers of `path` run (none when undefined). */
async function healthUnder(http: string, path?: string): Promise<number[]> {
  // The pollers run in a process of their own, as dashboards do: in one
  // process they would queue behind each other's response parsing and measure
  // this client, not the instance.
  const load =
    path === undefined
      ? undefined
      : fork(join(import.meta.dirname, "snapshot-load.mjs"), [http, OWNER.authorization!, path], {
          stdio: "ignore",
        });
  if (load !== undefined) await new Promise((r) => load.once("message", r));
  const health: number[] = [];
  for (let i = 0; i < 400; i++) health.push(await timed(`${http}api/health`));
  if (load !== undefined) {
    const stopped = new Promise((r) => load.once("exit", r));
    load.send("stop");
    await stopped;
  }
  return health;
}

/** Snapshot latency at 6,000 items, and health while four snapshots run —
 * beside health alone and under four pollers of health itself, which is what
 * this machine gives any request while four busy clients share its cores. */
async function reads(http: string) {
  const snap: number[] = [];
  for (let i = 0; i < 50; i++) snap.push(await timed(`${http}api/snapshot`));
  const alone = await healthUnder(http);
  const cheap = await healthUnder(http, "api/health");
  const health = await healthUnder(http, "api/snapshot");
  return {
    snapshot_6000_p50_ms: round(median(snap), 2),
    snapshot_6000_p99_ms: round(percentile(snap, 99), 2),
    health_alone_p99_ms: round(percentile(alone, 99), 2),
    health_under_4_health_pollers_p99_ms: round(percentile(cheap, 99), 2),
    health_under_4_snapshots_p50_ms: round(median(health), 2),
    health_under_4_snapshots_p99_ms: round(percentile(health, 99), 2),
  };
}

function wall(args: string[], env: NodeJS.ProcessEnv, runs = 20): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, args, { env, stdio: "ignore" });
    samples.push(performance.now() - t0);
  }
  return round(median(samples), 1);
}

export async function benchBoard() {
  const out: Record<string, unknown> = { upsert_through_store: upsertCost() };
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-board-"));
  fill(join(dir, "ccmsg.db"), 6000);
  const inst = await start(dir);
  out.http_mutations = await mutations(inst.http);
  out.reads_at_6000 = await reads(inst.http);
  const exited = new Promise((r) => inst.child.once("exit", r));
  inst.child.kill("SIGTERM");
  await exited;
  const env = { ...ENV, CCMSG_STATE_DIR: dir };
  const node = wall(["-e", "0"], ENV);
  const status = wall([CLI, "status", "--json"], env);
  out.status_cold = {
    bare_node_ms: node,
    status_json_ms: status,
    over_bare_node_ms: round(status - node, 1),
  };
  rmSync(dir, { recursive: true, force: true });
  out.targets = { upsert_ms: 0.2, claim_p50_ms: 5, status_over_node_ms: 100, health_p99_ms: 5 };
  return out;
}
