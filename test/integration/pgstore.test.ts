import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimWorkItem, upsertWorkItem } from "../../src/board/board.js";
import { claimWorkItemPg, moveWorkItemPg, upsertWorkItemPg } from "../../src/board/pg-board.js";
import { STATE_STORE_BUSY } from "../../src/contract/errors.js";
import { CheckRunsStore } from "../../src/store/check-runs.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import { PgBoardStore } from "../../src/store/pg/board-store.js";
import { WorkItemsStore } from "../../src/store/work-items.js";
import { http } from "../helpers/http.js";
import { CLI, isolatedHome, ROOT, runCli, startInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

// The board's store on a real PostgreSQL server (a throwaway cluster): the
// same rules as on SQLite, with row locks, LISTEN/NOTIFY and lock timeouts.

let cluster: TestPostgres;
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** A child process running `test/helpers/claimer.mjs`. */
function claimer(url: string, owner: string, count: number) {
  const child = fork(
    join(ROOT, "test", "helpers", "claimer.mjs"),
    [url, owner, "item", String(count), "8"],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const opened = new Promise<void>((resolve) => child.once("message", () => resolve()));
  const result = new Promise<{ won: string[]; refused: string[] }>((resolve, reject) => {
    child.on("message", (m) => {
      if (typeof m === "object") resolve(m as { won: string[]; refused: string[] });
    });
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`claimer ${owner} exited ${code}`));
    });
  });
  return { opened, go: () => child.send("go"), result };
}

describe("PostgreSQL board store", () => {
  it("2 × 1,000 concurrent claims from two processes give each item exactly one owner", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url);
    try {
      await store.write(async (items) => {
        for (let i = 0; i < 1000; i++)
          await items.put({
            ...{ id: `item-${i}`, source: "manual", sourceId: null, title: `item ${i}` },
            ...{ status: "open", priority: null, url: null, owner: null, repoRoot: null },
            ...{ sessionId: null, metadata: null, createdAt: "2026-01-01T00:00:00.000Z" },
            updatedAt: "2026-01-01T00:00:00.000Z",
          });
      });
      const a = claimer(url, "alice", 1000);
      const b = claimer(url, "bob", 1000);
      await Promise.all([a.opened, b.opened]);
      a.go();
      b.go();
      const [ra, rb] = await Promise.all([a.result, b.result]);
      // Every claim either won or was refused as owned by the other.
      expect(ra.won.length + ra.refused.length).toBe(1000);
      expect(rb.won.length + rb.refused.length).toBe(1000);
      for (const r of [...ra.refused, ...rb.refused]) expect(r).toMatch(/already owned by/);
      // No item was won twice, and every item was won once.
      const wonBy = new Map<string, string>();
      for (const id of ra.won) wonBy.set(id, "alice");
      for (const id of rb.won) {
        expect(wonBy.has(id)).toBe(false);
        wonBy.set(id, "bob");
      }
      expect(wonBy.size).toBe(1000);
      // The database agrees with what each claimer was told.
      const rows = await store.items().all();
      expect(rows.filter((i) => i.owner === wonBy.get(i.id)).length).toBe(1000);
      expect(rows.every((i) => i.status === "running")).toBe(true);
    } finally {
      await store.close();
    }
  }, 120_000);

  it("automatic claims skip rows being claimed and never hand one item to two owners", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url, { maxConnections: 10 });
    try {
      for (let i = 0; i < 40; i++)
        await upsertWorkItemPg(store, {
          id: `a-${i}`,
          title: `a ${i}`,
          priority: i < 5 ? "critical" : "low",
        });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => claimWorkItemPg(store, { owner: `o${i}` })),
      );
      const claimed = results.flatMap((r) => (r.claimed ? [r.item.id] : []));
      expect(claimed.length).toBe(40);
      expect(new Set(claimed).size).toBe(40);
      expect(results.filter((r) => !r.claimed).length).toBe(10);
      // Critical items go first: no low item was claimed before every
      // critical one was taken.
      const order = results
        .flatMap((r) => (r.claimed ? [r.item] : []))
        .sort((x, y) => x.updatedAt.localeCompare(y.updatedAt));
      const lastCritical = order.findLastIndex((i) => i.priority === "critical");
      const firstLow = order.findIndex((i) => i.priority === "low");
      expect(lastCritical).toBeLessThan(firstLow + 8);
    } finally {
      await store.close();
    }
  });

  it("applies the board's rules: done items and someone else's items are refused", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url);
    try {
      await upsertWorkItemPg(store, { id: "r1", title: "one" });
      const c = await claimWorkItemPg(store, { id: "r1", owner: "alice", as: "agent" });
      expect(c.claimed && c.item.metadata).toEqual({
        claimOwnerSource: "local",
        assigneeKind: "agent",
      });
      await expect(claimWorkItemPg(store, { id: "r1", owner: "bob" })).rejects.toThrow(
        "already owned by alice",
      );
      expect((await claimWorkItemPg(store, { id: "r1", owner: "alice" })).claimed).toBe(true);
      const moved = await moveWorkItemPg(store, "r1", " Done ");
      expect(moved.item.status).toBe("done");
      await expect(claimWorkItemPg(store, { id: "r1", owner: "alice" })).rejects.toThrow("is done");
      await expect(moveWorkItemPg(store, "r1", "imaginary")).rejects.toThrow("invalid lane");
      await expect(moveWorkItemPg(store, "nope", "ready")).rejects.toMatchObject({
        code: "not_found",
      });
      await expect(upsertWorkItemPg(store, { id: "r1", status: "open" })).rejects.toThrow(
        "move it to a lane",
      );
    } finally {
      await store.close();
    }
  });

  it("reports STATE_STORE_BUSY when another connection holds the row lock past the timeout", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url, { busyTimeoutMs: 300 });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await upsertWorkItemPg(store, { id: "held", title: "held" });
      await holder.query("BEGIN");
      await holder.query("SELECT * FROM work_items WHERE id = 'held' FOR UPDATE");
      const started = Date.now();
      await expect(claimWorkItemPg(store, { id: "held", owner: "bob" })).rejects.toMatchObject({
        code: STATE_STORE_BUSY,
        status: 503,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      await holder.query("ROLLBACK");
      // Once the holder is gone the same claim goes through.
      expect((await claimWorkItemPg(store, { id: "held", owner: "bob" })).claimed).toBe(true);
    } finally {
      await holder.end();
      await store.close();
    }
  });

  it("tells every listener about every change, whoever made it", async () => {
    const url = await cluster.database();
    const [one, two] = await Promise.all([PgBoardStore.open(url), PgBoardStore.open(url)]);
    const heard: [Set<string>, Set<string>] = [new Set(), new Set()];
    const stops = await Promise.all(
      [one, two].map((s, i) =>
        s.listen(
          (ids) => {
            for (const id of ids) heard[i]!.add(id);
          },
          (error) => {
            throw error;
          },
        ),
      ),
    );
    try {
      for (let i = 0; i < 20; i++)
        await upsertWorkItemPg(i % 2 === 0 ? one : two, { id: `w-${i}`, title: `w ${i}` });
      await claimWorkItemPg(two, { id: "w-0", owner: "x" });
      await waitFor(() => heard[0].size === 20 && heard[1].size === 20);
      expect([...heard[0]].sort()).toEqual([...heard[1]].sort());
    } finally {
      for (const stop of stops) await stop();
      await one.close();
      await two.close();
    }
  });

  it("migrates once: a second open (or a concurrent one) applies nothing again", async () => {
    const url = await cluster.database();
    const stores = await Promise.all([1, 2, 3].map(() => PgBoardStore.open(url)));
    for (const s of stores) await s.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const r = await c.query("SELECT version, name FROM schema_migrations ORDER BY version");
    await c.end();
    expect(r.rows).toEqual([
      { version: 1, name: "001_work_items" },
      { version: 2, name: "002_check_runs" },
      { version: 3, name: "003_kv" },
    ]);
  });
});

async function waitFor(ok: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("instances sharing a team board in PostgreSQL", () => {
  type Counts = { totalCount: number; doneCount: number };
  type Items = { items: { id: string; title: string; owner: string | null; status: string }[] };
  const has =
    (id: string, ok: (i: Items["items"][number]) => boolean = () => true) =>
    (f: { topic?: string; snapshot?: boolean; data?: unknown }) =>
      f.topic === "work_items" &&
      !f.snapshot &&
      (f.data as Items).items.some((i) => i.id === id && ok(i));

  it("two instances serve one board: watchers on both see every change, whoever made it", async () => {
    const url = await cluster.database();
    const secretUrl = url.replace("postgres@", "postgres:hunter2@");
    // A names the board with --store; B through its config's `store` key.
    const homeB = isolatedHome();
    mkdirSync(join(homeB.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(homeB.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ store: url }),
    );
    const [a, b] = await Promise.all([
      startInstance({ args: ["--store", secretUrl] }),
      startInstance({ env: homeB.env }),
    ]);
    const watchers = await Promise.all([Peer.unix(a.socket), Peer.unix(b.socket)]);
    for (const w of watchers) {
      await w.helloUser();
      expect(((await w.subscribe("work_items")).data as Items).items).toEqual([]);
    }
    const everyoneSees = (pred: ReturnType<typeof has>) =>
      Promise.all(watchers.map((w) => w.next(pred)));

    // Created through A, claimed through B, moved through A, then an item
    // from the CLI: each watcher hears each step.
    expect((await http(a.http, "POST", "/api/work-items", { id: "w1", title: "one" })).status).toBe(
      200,
    );
    await everyoneSees(has("w1", (i) => i.title === "one"));
    const claim = await http(b.http, "POST", "/api/work-items/w1/claim", { owner: "bob" });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    await everyoneSees(has("w1", (i) => i.owner === "bob" && i.status === "running"));
    // The other instance's claim holds on this one too.
    const taken = await http(a.http, "POST", "/api/work-items/w1/claim", { owner: "alice" });
    expect(taken.status).toBe(400);
    expect(taken.body.error).toMatch(/already owned by bob/);
    expect((await http(a.http, "POST", "/api/work-items/w1/move", { lane: "done" })).status).toBe(
      200,
    );
    await everyoneSees(has("w1", (i) => i.status === "done"));
    const cli = await runCli(
      ["board", "add", "--id", "cli-1", "--title", "from the CLI", "--store", url, "--json"],
      a.env,
    );
    expect(cli.code, cli.stderr).toBe(0);
    await everyoneSees(has("cli-1"));

    // Both snapshots show the one board; health names it without the password.
    for (const inst of [a, b]) {
      const snap = await http(inst.http, "GET", "/api/snapshot");
      expect((snap.body.workItems as Counts).totalCount).toBe(2);
      expect((snap.body.workItems as Counts).doneCount).toBe(1);
      const status = await http(inst.http, "GET", "/api/status");
      expect((status.body.workItems as Counts).totalCount).toBe(2);
    }
    // The board CLI finds the team board in B's config too.
    const viaConfig = await runCli(["board", "list", "--json"], homeB.env);
    expect(viaConfig.code, viaConfig.stderr).toBe(0);
    expect(JSON.parse(viaConfig.stdout).totalCount).toBe(2);
    // Every board verb reaches the team board: claim, then show what it wrote.
    const claimed = await runCli(
      ["board", "claim", "cli-1", "--owner", "carol", "--as", "human", "--json"],
      homeB.env,
    );
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(JSON.parse(claimed.stdout)).toMatchObject({ claimed: true, item: { owner: "carol" } });
    await everyoneSees(has("cli-1", (i) => i.owner === "carol"));
    const shown = await runCli(["board", "show", "cli-1", "--json"], homeB.env);
    expect(JSON.parse(shown.stdout).item).toMatchObject({ owner: "carol", status: "running" });
    const health = await http(a.http, "GET", "/api/health");
    expect(health.body.stateDbPath).toMatch(/^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:/);
    expect(JSON.stringify(health.body)).not.toContain("hunter2");
    // The instance's own file holds no board items: they are all in PostgreSQL.
    const list = await runCli(["board", "list", "--json"], {
      ...a.env,
      CCMSG_STATE_DIR: a.stateDir,
    });
    expect(JSON.parse(list.stdout).totalCount).toBe(0);
    for (const w of watchers) w.close();
    await Promise.all([a.stop(), b.stop()]);
  }, 60_000);

  it("an instance whose LISTEN connection was cut listens again and catches up", async () => {
    const url = await cluster.database();
    const inst = await startInstance({ args: ["--store", url] });
    const w = await Peer.unix(inst.socket);
    await w.helloUser();
    await w.subscribe("work_items");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const cut = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()",
    );
    expect(cut.rowCount).toBe(1);
    // Written while the instance is not listening: caught up when it is again.
    const cli = await runCli(
      ["board", "add", "--id", "gap-1", "--title", "in the gap", "--store", url, "--json"],
      inst.env,
    );
    expect(cli.code, cli.stderr).toBe(0);
    await w.next(has("gap-1"), 15_000);
    // And it hears later changes as before.
    await runCli(["board", "move", "gap-1", "done", "--store", url], inst.env);
    await w.next(
      has("gap-1", (i) => i.status === "done"),
      15_000,
    );
    await admin.end();
    w.close();
    await inst.stop();
  }, 60_000);

  it("the MCP server's board tools act on the team board the config names", async () => {
    const url = await cluster.database();
    const home = isolatedHome();
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ store: url }),
    );
    const inst = await startInstance({ env: home.env });
    const added = await runCli(
      ["board", "add", "--id", "mcp-1", "--title", "Fix the widget", "--store", url],
      home.env,
    );
    expect(added.code, added.stderr).toBe(0);
    const sid = newSid();
    const client = new McpClient({ name: "test-harness", version: "0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp"],
        env: { ...home.env, PATH: process.env.PATH!, CLAUDE_CODE_SESSION_ID: sid },
        stderr: "pipe",
      }),
    );
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const r = (await client.callTool({ name, arguments: args })) as {
        content: { text: string }[];
      };
      return r.content[0]!.text;
    };
    expect(await call("board_list")).toContain("Fix the widget");
    expect(await call("board_claim", { id: "mcp-1" })).toMatch(
      new RegExp(`^claimed mcp-1 .*— ${sid}$`),
    );
    expect(await call("board_move", { id: "mcp-1", lane: "done" })).toMatch(
      /^moved mcp-1 +\[done\/done\]/,
    );
    await client.close();
    const store = await PgBoardStore.open(url);
    expect(await store.items().get("mcp-1")).toMatchObject({ owner: sid, status: "done" });
    await store.close();
    await inst.stop();
  }, 60_000);

  it("a claim waiting on a row another connection holds answers 503 STATE_STORE_BUSY; reads keep answering", async () => {
    const url = await cluster.database();
    const inst = await startInstance({ args: ["--store", url] });
    expect(
      (await http(inst.http, "POST", "/api/work-items", { id: "held", title: "held" })).status,
    ).toBe(200);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT * FROM work_items WHERE id = 'held' FOR UPDATE");
    const t0 = Date.now();
    let settled = false;
    const claim = http(inst.http, "POST", "/api/work-items/held/claim", { owner: "alice" });
    void claim.finally(() => {
      settled = true;
    });
    let rounds = 0;
    const failed: string[] = [];
    while (!settled) {
      const snap = await http(inst.http, "GET", "/api/snapshot");
      if (snap.status !== 200 || (snap.body.workItems as Counts).totalCount !== 1)
        failed.push(`snapshot ${snap.status}`);
      rounds++;
      // Paced: a read every 20 ms shows they never wait; back to back they
      // took both cores of the suite's machine for the lock's 5 s.
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await claim;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
    expect(rounds).toBeGreaterThan(5);
    expect(failed).toEqual([]);
    expect(r.status).toBe(503);
    expect(r.headers["retry-after"]).toBe("1");
    expect(r.body).toMatchObject({ ok: false, code: "STATE_STORE_BUSY" });
    await holder.query("ROLLBACK");
    await holder.end();
    // Nothing was written by the refused claim; once the lock is gone it goes through.
    const again = await http(inst.http, "POST", "/api/work-items/held/claim", { owner: "alice" });
    expect(again.status).toBe(200);
    expect((again.body.item as { owner: string }).owner).toBe("alice");
    await inst.stop();
  }, 60_000);

  it("store migrate copies every item and check run of a SQLite board, and a second run changes nothing", async () => {
    const url = await cluster.database();
    const home = isolatedHome();
    const env = home.env;
    const dbPath = join(home.root, "board.db");
    const file = openStateStore(dbPath);
    for (let i = 0; i < 1200; i++)
      upsertWorkItem(file, {
        id: `m-${i}`,
        title: `item ${i}`,
        priority: i % 3 === 0 ? "high" : undefined,
        metadata: { n: i, tags: ["a", "b"] },
      });
    claimWorkItem(file, { id: "m-7", owner: "carol", as: "agent" });
    new CheckRunsStore(file.db).record({
      ...{ repoRoot: "/r", name: "lint", command: "npm run lint", status: "pass" },
      ...{ exitCode: 0, durationMs: 12, outputTail: "ok", finishedAt: "2026-12-01T00:00:00.000Z" },
    });
    const expected = new WorkItemsStore(file.db).all();
    file.close();

    const first = await runCli(["store", "migrate", "--to", url, "--db", dbPath, "--json"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, workItems: 1200, checkRuns: 1 });
    expect(first.stderr).toMatch(/1000\/1200 work items/);
    const second = await runCli(["store", "migrate", "--to", url, "--db", dbPath, "--text"], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/copied 1200 work items, 1 check runs and 0 KV entries/);

    const store = await PgBoardStore.open(url);
    try {
      expect(await store.items().all()).toEqual(expected);
      const runs = await store.items().latestCheckRuns("/r");
      expect(runs).toHaveLength(1);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      expect((await c.query("SELECT count(*)::int AS n FROM check_runs")).rows[0].n).toBe(1);
      await c.end();
    } finally {
      await store.close();
    }
    // A bad target is refused before anything is read.
    const bad = await runCli(["store", "migrate", "--to", "/tmp/x.db", "--db", dbPath], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/postgres:\/\//);
  }, 60_000);
});
