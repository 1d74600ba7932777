import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimWorkItem } from "../src/board/board.js";
import { claimWorkItemPg } from "../src/board/pg-board.js";
import type { WorkItem } from "../src/contract/ecc/board.js";
import { fileKv, type KvBackend } from "../src/instance/kv/kv.js";
import { CommitQueue } from "../src/store/commit-queue.js";
import { KvStore } from "../src/store/kv.js";
import { openStateStore } from "../src/store/migrated-store.js";
import { PgBoardStore } from "../src/store/pg/board-store.js";
import { TeamKv } from "../src/store/pg/team-kv.js";
import { WorkItemsStore } from "../src/store/work-items.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { round } from "./measure.js";

// Claim throughput on the team board in PostgreSQL against the instance's
// SQLite file (DR-0046): one client claiming in turn, and two processes
// racing for the same items (each item won once). PostgreSQL runs with its
// default durability (fsync and synchronous_commit on) and, as a second row,
// with synchronous_commit off — what SQLite's WAL with synchronous=NORMAL
// promises (a crash keeps every commit, a power loss may take the last ones).
// KV writes and reads go through the KV engine's two backends.

const ITEMS = 1000;

function item(i: number): WorkItem {
  return {
    ...{ id: `item-${i}`, source: "manual", sourceId: null, title: `item ${i}`, status: "open" },
    ...{ priority: null, url: null, owner: null, repoRoot: null, sessionId: null, metadata: null },
    ...{ createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" },
  };
}

function fillSqlite(path: string): void {
  const store = openStateStore(path);
  const items = new WorkItemsStore(store.db);
  store.write(() => {
    for (let i = 0; i < ITEMS; i++) items.put(item(i));
  });
  store.close();
}

async function fillPg(url: string): Promise<void> {
  const store = await PgBoardStore.open(url);
  await store.write(async (q) => {
    for (let i = 0; i < ITEMS; i++) await q.put(item(i));
  });
  await store.close();
}

/** Claims per second, one client claiming every item in turn. */
async function sequential(location: string, pg: boolean): Promise<number> {
  if (pg) {
    const store = await PgBoardStore.open(location);
    const start = performance.now();
    for (let i = 0; i < ITEMS; i++)
      await claimWorkItemPg(store, { id: `item-${i}`, owner: "solo" });
    const ms = performance.now() - start;
    await store.close();
    return ITEMS / (ms / 1000);
  }
  const store = openStateStore(location);
  const start = performance.now();
  for (let i = 0; i < ITEMS; i++) claimWorkItem(store, { id: `item-${i}`, owner: "solo" });
  const ms = performance.now() - start;
  store.close();
  return ITEMS / (ms / 1000);
}

/** Two processes claim all items at once (8 in flight each on PostgreSQL):
 * attempts per second over the race, and how many items were won. */
async function race(location: string): Promise<{ attempts_per_s: number; won: number }> {
  const script = join(import.meta.dirname, "..", "test", "helpers", "claimer.mjs");
  const children = ["alice", "bob"].map((owner) =>
    fork(script, [location, owner, "item", String(ITEMS), "8"], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
  await Promise.all(children.map((c) => new Promise((r) => c.once("message", r))));
  const results = children.map(
    (c) =>
      new Promise<{ won: string[] }>((r) => c.once("message", (m) => r(m as { won: string[] }))),
  );
  const start = performance.now();
  for (const c of children) c.send("go");
  const done = await Promise.all(results);
  const ms = performance.now() - start;
  return {
    attempts_per_s: round((2 * ITEMS) / (ms / 1000)),
    won: done.reduce((n, r) => n + r.won.length, 0),
  };
}

const KV_WRITES = 2000;
const KV_READS = 200_000;

/** KV through the engine's backends: the file (group commit, as the
 * instance writes it) and the team store (one LWW upsert per write, reads
 * from the in-memory copy). Writes per second one at a time (each awaited)
 * and 32 in flight; reads per second of keys just written. */
async function kvRates(kv: KvBackend): Promise<Record<string, number>> {
  const value = { owner: "alice", glob: "src/**", expires_at: 1_900_000_000_000 };
  let start = performance.now();
  for (let i = 0; i < KV_WRITES; i++) await kv.write("bench", `seq-${i}`, value, 1000 + i);
  const sequential = KV_WRITES / ((performance.now() - start) / 1000);
  start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < KV_WRITES; i = next++)
        await kv.write("bench", `par-${i}`, value, 1000 + i);
    }),
  );
  const parallel = KV_WRITES / ((performance.now() - start) / 1000);
  start = performance.now();
  for (let i = 0; i < KV_READS; i++) kv.read("bench", `seq-${i % KV_WRITES}`);
  const reads = KV_READS / ((performance.now() - start) / 1000);
  return {
    writes_per_s_one_at_a_time: round(sequential),
    writes_per_s_32_in_flight: round(parallel),
    reads_per_s: round(reads),
  };
}

async function kvSqlite(path: string): Promise<Record<string, number>> {
  const store = openStateStore(path);
  store.db.pragma("busy_timeout = 0");
  const queue = new CommitQueue(store.db, path);
  try {
    return await kvRates(fileKv(new KvStore(store.db), (w) => queue.run(w)));
  } finally {
    store.close();
  }
}

async function kvPg(url: string): Promise<Record<string, number>> {
  const store = await PgBoardStore.open(url);
  try {
    return await kvRates(await TeamKv.open(store, () => {}));
  } finally {
    await store.close();
  }
}

export async function benchPgstore() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-pg-"));
  const cluster = await startPostgres({ durable: true });
  try {
    const out: Record<string, unknown> = { items: ITEMS };
    const sqlite = (name: string) => join(dir, `${name}.db`);
    const lazy = (url: string) => `${url}?options=-c%20synchronous_commit%3Doff`;

    fillSqlite(sqlite("seq"));
    const seqPg = await cluster.database("seq");
    await fillPg(seqPg);
    const seqPgLazy = await cluster.database("seq_lazy");
    await fillPg(seqPgLazy);
    out.sequential_claims_per_s = {
      sqlite: round(await sequential(sqlite("seq"), false)),
      postgres: round(await sequential(seqPg, true)),
      postgres_sync_commit_off: round(await sequential(lazy(seqPgLazy), true)),
    };

    fillSqlite(sqlite("race"));
    const racePg = await cluster.database("race");
    await fillPg(racePg);
    const racePgLazy = await cluster.database("race_lazy");
    await fillPg(racePgLazy);
    out.two_processes_racing = {
      sqlite: await race(sqlite("race")),
      postgres: await race(racePg),
      postgres_sync_commit_off: await race(lazy(racePgLazy)),
    };

    out.kv = {
      writes: KV_WRITES,
      sqlite: await kvSqlite(sqlite("kv")),
      postgres: await kvPg(await cluster.database("kv")),
      postgres_sync_commit_off: await kvPg(lazy(await cluster.database("kv_lazy"))),
    };
    return out;
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
