import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATE_STORE_BUSY } from "../../src/contract/errors.js";
import { CheckRunsStore } from "../../src/store/check-runs.js";
import { KvStore } from "../../src/store/kv.js";
import { type KvVersion, kvWins } from "../../src/store/kv-order.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import { PgBoardStore } from "../../src/store/pg/board-store.js";
import { TeamKv } from "../../src/store/pg/team-kv.js";
import { isolatedHome, runCli, startInstance } from "../helpers/instance.js";
import { Peer } from "../helpers/peer.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { makeRepo, runIn } from "../hud/helpers.js";

// KV in the team store (DR-0046 update) on a real PostgreSQL server: the
// single-statement last-writer-wins upsert, tombstones, and two instances
// sharing one table (their `kv:<ns>` subscribers, file reservations).

let cluster: TestPostgres;
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

async function waitFor(ok: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TeamKv over its own store, following notifications as an instance does. */
async function openKv(url: string) {
  const store = await PgBoardStore.open(url);
  let follower: { heard(p: string[]): void } | undefined;
  const stop = await store.listen(
    () => {},
    (error) => {
      throw error;
    },
    { ccmsg_kv: (p) => follower?.heard(p) },
  );
  const kv = await TeamKv.open(store, (_c, f) => {
    follower = f;
  });
  return {
    kv,
    store,
    close: async () => {
      await stop();
      await store.close();
    },
  };
}

async function sql<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

describe("KV in the PostgreSQL team store", () => {
  it("reads, writes and removes with last writer wins, the same total order as every replica, and keeps tombstones", async () => {
    const url = await cluster.database();
    const one = await openKv(url);
    const two = await openKv(url);
    try {
      const { kv } = one;
      expect(await kv.write("app", "theme", { dark: true }, 100)).toEqual({
        updated_at: 100,
        won: true,
      });
      expect(kv.read("app", "theme")).toEqual({ value: { dark: true }, updated_at: 100 });
      // An older write loses and reports the stamp held.
      expect(await kv.write("app", "theme", "old", 50)).toEqual({ updated_at: 100, won: false });
      expect(kv.read("app", "theme")?.value).toEqual({ dark: true });

      // Equal stamps: the JSON text greater in UTF-8 bytes wins, whichever
      // arrives first. U+FF5E sorts after a surrogate pair in UTF-16 but
      // before the emoji's 4-byte UTF-8 form.
      const high = "\u{1F600}";
      const bmp = "\uFF5E";
      await kv.write("app", "tie", high, 200);
      expect(await two.kv.write("app", "tie", bmp, 200)).toEqual({ updated_at: 200, won: false });
      await kv.write("app", "tie2", bmp, 200);
      await two.kv.write("app", "tie2", high, 200);
      const ties = await sql<{ key: string; value: string }>(
        url,
        "SELECT key, value FROM kv WHERE key LIKE 'tie%' ORDER BY key",
      );
      expect(ties.map((r) => JSON.parse(r.value))).toEqual([high, high]);
      await waitFor(() => kv.read("app", "tie2")?.value === high);
      expect(two.kv.read("app", "tie")?.value).toBe(high);

      // A removal beats a value of the same stamp, and stays as a tombstone
      // that an older write cannot get past.
      await kv.delete("app", "theme", 100);
      expect(kv.read("app", "theme")).toBeUndefined();
      expect(await kv.delete("app", "theme", 100)).toBe(false);
      expect((await kv.write("app", "theme", "late", 99)).won).toBe(false);
      expect(
        await sql(url, "SELECT value, updated_at, deleted FROM kv WHERE key = 'theme'"),
      ).toEqual([{ value: null, updated_at: "100", deleted: true }]);
      // A newer write gets past it.
      expect((await kv.write("app", "theme", "new", 101)).updated_at).toBe(101);
      expect(kv.list("app").map((e) => [e.key, "value" in e ? e.value : undefined])).toEqual([
        ["theme", "new"],
        ["tie", high],
        ["tie2", high],
      ]);

      // The other store's copy heard all of it and agrees.
      await waitFor(() => two.kv.read("app", "theme")?.value === "new");
      expect(two.kv.list("app")).toEqual(kv.list("app"));
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("the SQL upsert picks the same winner as kvWins, whatever order versions arrive in", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url);
    try {
      // Few stamps and values that differ in UTF-8 vs UTF-16 order, so ties
      // between values and removals are common.
      const values = ["a", "\uFF5E", "\u{1F600}", "é", 1, [1], { z: 0 }, null, "Z"];
      let seed = 7;
      const rand = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const versions = Array.from({ length: 400 }, () => ({
        key: `k${rand(8)}`,
        updated_at: 10 + rand(4),
        json: rand(5) === 0 ? null : JSON.stringify(values[rand(values.length)]),
      }));
      const expected = new Map<string, KvVersion>();
      for (const v of versions) if (kvWins(v, expected.get(v.key))) expected.set(v.key, { ...v });
      // Two writers at once, each in its own shuffled order.
      const shuffled = () => [...versions].sort(() => rand(3) - 1);
      await Promise.all(
        [shuffled(), shuffled()].map(async (order) => {
          for (const v of order) await store.kv((t) => t.put("p", v.key, v.json, v.updated_at));
        }),
      );
      const held = await store.kv((t) => t.all());
      expect(
        Object.fromEntries(held.map((r) => [r.key, { json: r.json, updated_at: r.updated_at }])),
      ).toEqual(
        Object.fromEntries(
          [...expected].map(([k, v]) => [k, { json: v.json, updated_at: v.updated_at }]),
        ),
      );
    } finally {
      await store.close();
    }
  });

  it("a write that meets a row lock held past the busy timeout fails STATE_STORE_BUSY and writes nothing", async () => {
    const url = await cluster.database();
    const store = await PgBoardStore.open(url, { busyTimeoutMs: 300 });
    const kv = await TeamKv.open(store, () => {});
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await kv.write("app", "k", 1, 10);
      await holder.query("BEGIN");
      await holder.query("SELECT * FROM kv WHERE ns = 'app' AND key = 'k' FOR UPDATE");
      const failed = await kv.write("app", "k", 2, 20).catch((e: unknown) => e);
      expect(failed).toMatchObject({ code: STATE_STORE_BUSY, status: 503 });
      await holder.query("ROLLBACK");
      expect(await sql(url, "SELECT value FROM kv")).toEqual([{ value: "1" }]);
      // Once the lock is gone, the same write lands.
      expect((await kv.write("app", "k", 2, 20)).won).toBe(true);
    } finally {
      await holder.end();
      await store.close();
    }
  });
});

describe("instances sharing KV in PostgreSQL", () => {
  type Entries = { entries: { key: string; value?: unknown; deleted?: boolean }[] };
  const kvFrame =
    (ns: string, key: string, ok: (e: Entries["entries"][number]) => boolean) =>
    (f: { topic?: string; snapshot?: boolean; data?: unknown }) =>
      f.topic === `kv:${ns}` &&
      !f.snapshot &&
      (f.data as Entries).entries.some((e) => e.key === key && ok(e));

  it("a kv:<ns> subscriber on each instance sees the other's writes and removals; reservations conflict across them", async () => {
    const url = await cluster.database();
    const [a, b] = await Promise.all([
      startInstance({ args: ["--store", url] }),
      startInstance({ args: ["--store", url] }),
    ]);
    const [pa, pb] = await Promise.all([Peer.unix(a.socket), Peer.unix(b.socket)]);
    try {
      for (const p of [pa, pb]) {
        await p.helloUser();
        expect(((await p.subscribe("kv:app")).data as Entries).entries).toEqual([]);
      }
      await pa.call("kv_write", { ns: "app", key: "from-a", value: { n: 1 } });
      await pb.next(kvFrame("app", "from-a", (e) => (e.value as { n: number }).n === 1));
      await pb.call("kv_write", { ns: "app", key: "from-b", value: "b" });
      await pa.next(kvFrame("app", "from-b", (e) => e.value === "b"));
      // Each answers reads of the other's writes, and a fresh subscription's
      // snapshot carries both.
      expect(await pb.call("kv_read", { ns: "app", key: "from-a" })).toMatchObject({
        value: { n: 1 },
      });
      await pb.call("kv_delete", { ns: "app", key: "from-a" });
      await pa.next(kvFrame("app", "from-a", (e) => e.deleted === true));
      const failed = await pa.request("kv_read", { ns: "app", key: "from-a" });
      expect(failed.error?.code).toBe("not_found");
      const late = await Peer.unix(a.socket);
      await late.helloUser();
      expect(((await late.subscribe("kv:app")).data as Entries).entries).toEqual([
        expect.objectContaining({ key: "from-b", value: "b" }),
      ]);
      late.close();

      // An exclusive reservation taken through A is refused through B.
      const dir = mkdtempSync(join(a.env.HOME!, "proj-"));
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src", "a.ts"), "export const a = 1;\n");
      const A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
      const B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb";
      const first = await runCli(
        ["reserve", "src/**", "--for", "10m", "--json"],
        { ...a.env, CLAUDE_CODE_SESSION_ID: A },
        undefined,
        { cwd: dir },
      );
      expect(first.code, first.stderr).toBe(0);
      await waitForAsync(async () => {
        const listed = await runCli(["reservations", "--json"], b.env, undefined, { cwd: dir });
        return listed.stdout.includes(A);
      });
      const second = await runCli(
        ["reserve", "src/a.ts", "--for", "10m", "--json"],
        { ...b.env, CLAUDE_CODE_SESSION_ID: B },
        undefined,
        { cwd: dir },
      );
      expect(second.code).toBe(1);
      const error = (JSON.parse(second.stderr) as { error: { code: string; msg: string } }).error;
      expect(error.code).toBe("file_conflict");
      expect(error.msg).toContain(`session ${A}`);
    } finally {
      pa.close();
      pb.close();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("a KV write meeting a row lock held past the busy timeout is refused as busy; reads keep answering", async () => {
    const url = await cluster.database();
    const inst = await startInstance({ args: ["--store", url] });
    const p = await Peer.unix(inst.socket);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await p.helloUser();
      await p.call("kv_write", { ns: "app", key: "k", value: 1 });
      await holder.query("BEGIN");
      await holder.query("SELECT * FROM kv WHERE key = 'k' FOR UPDATE");
      const started = Date.now();
      const pending = p.request("kv_write", { ns: "app", key: "k", value: 2 });
      // The instance is not held up: a read answers while the write waits.
      expect(await p.call("kv_read", { ns: "app", key: "k" })).toMatchObject({ value: 1 });
      const refused = await pending;
      expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
      expect(refused.ok).toBe(false);
      expect(refused.error?.code).toBe("internal_error");
      expect(refused.error?.msg).toMatch(/state store is busy/);
      await holder.query("ROLLBACK");
      expect(await p.call("kv_write", { ns: "app", key: "k", value: 3 })).toHaveProperty(
        "updated_at",
      );
      expect(await sql(url, "SELECT value FROM kv")).toEqual([{ value: "3" }]);
    } finally {
      await holder.end();
      p.close();
      await inst.stop();
    }
  }, 60_000);

  it("an instance whose LISTEN connection was cut re-reads KV and tells subscribers what it missed", async () => {
    const url = await cluster.database();
    const inst = await startInstance({ args: ["--store", url] });
    const w = await Peer.unix(inst.socket);
    // The other writer does not listen: the instance's is the one LISTEN.
    const otherStore = await PgBoardStore.open(url);
    const other = { kv: await TeamKv.open(otherStore, () => {}), close: () => otherStore.close() };
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await w.helloUser();
      await w.subscribe("kv:app");
      const cut = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()",
      );
      expect(cut.rowCount).toBe(1);
      // Written elsewhere while the instance is not listening.
      await other.kv.write("app", "gap", "missed", Date.now());
      await w.next(
        kvFrame("app", "gap", (e) => e.value === "missed"),
        15_000,
      );
      await other.kv.write("app", "gap", "after", Date.now() + 1);
      await w.next(
        kvFrame("app", "gap", (e) => e.value === "after"),
        15_000,
      );
    } finally {
      await admin.end();
      await other.close();
      w.close();
      await inst.stop();
    }
  }, 60_000);
});

describe("check runs in the team store", () => {
  /** An isolated home whose config names the team store. */
  function home(config: Record<string, unknown>) {
    const h = isolatedHome();
    const dir = join(h.env.XDG_CONFIG_HOME!, "ccmsg");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.json"), JSON.stringify(config));
    return h;
  }

  it("runs recorded on one machine show in another's HUD, as do reservations held in the store", async () => {
    const url = await cluster.database();
    const checks = [
      { name: "unit", command: "echo ok" },
      { name: "lint", command: "exit 2" },
    ];
    const one = home({ store: url, checks });
    const two = home({ store: url });
    const repo = makeRepo(one.root);
    const ran = await runIn(["check", "run", "--json"], one.env, { cwd: repo });
    expect(ran.code, ran.stderr).toBe(1);
    // The other home never ran a check: its HUD reads them from the store.
    const hud = JSON.parse((await runIn(["hud", "--json"], two.env, { cwd: repo })).stdout);
    // (by name: this home's config declares no checks to order them by)
    expect(hud.checks.local).toEqual([
      { command: "exit 2", status: "fail" },
      { command: "echo ok", status: "pass" },
    ]);
    const rows = await sql<{ n: number }>(url, "SELECT count(*)::int AS n FROM check_runs");
    expect(rows[0]!.n).toBe(2);
    // A home without the store sees none of them (its own file has none).
    const alone = home({});
    const own = JSON.parse((await runIn(["hud", "--json"], alone.env, { cwd: repo })).stdout);
    expect(JSON.stringify(own.checks.local)).not.toContain("exit 2");

    // A reservation held in the team store's KV is another session's to the HUD.
    const store = await PgBoardStore.open(url);
    try {
      const kv = await TeamKv.open(store, () => {});
      await kv.write(
        "reservations",
        "0c7e1d2b-3a4f-4b5c-8d6e-7f8091a2b3c4:held",
        {
          v: 1,
          glob: `${repo}/**`,
          holder: { sid: "0c7e1d2b-3a4f-4b5c-8d6e-7f8091a2b3c4", name: "elsewhere" },
          exclusive: true,
          reason: "held",
          created_at: Date.now(),
          expires_at: Date.now() + 3_600_000,
        },
        Date.now(),
      );
    } finally {
      await store.close();
    }
    const held = JSON.parse((await runIn(["hud", "--json"], two.env, { cwd: repo })).stdout);
    expect(JSON.stringify(held)).toContain("reserved by other sessions");
    // --store names the team store for one run, and must be PostgreSQL.
    const bad = await runIn(["check", "run", "--store", "/tmp/x.db"], one.env, { cwd: repo });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/postgres:\/\//);
  }, 60_000);
});

describe("store migrate with KV", () => {
  it("copies KV rows (tombstones too) and check runs; a second run changes nothing; newer team rows stay", async () => {
    const url = await cluster.database();
    const h = isolatedHome();
    const dbPath = join(h.root, "board.db");
    const file = openStateStore(dbPath);
    const kv = new KvStore(file.db);
    for (let i = 0; i < 600; i++)
      kv.write("app", `k${String(i).padStart(3, "0")}`, { i }, 1000 + i);
    kv.delete("app", "k001", 5000);
    kv.write("prefs", "theme", "light", 10);
    new CheckRunsStore(file.db).record({
      ...{ repoRoot: "/r", name: "unit", command: "npm test", status: "fail" },
      ...{
        exitCode: 1,
        durationMs: 5,
        outputTail: "1 failed",
        finishedAt: "2026-12-01T00:00:00.000Z",
      },
    });
    file.close();
    // The team store already moved on for one key: the copy must not undo it.
    const store = await PgBoardStore.open(url);
    const team = await TeamKv.open(store, () => {});
    await team.write("prefs", "theme", "dark", 20);
    await store.close();

    const dump = () =>
      sql(url, "SELECT ns, key, value, updated_at, deleted FROM kv ORDER BY ns, key");
    const first = await runCli(["store", "migrate", "--to", url, "--db", dbPath, "--json"], h.env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ workItems: 0, checkRuns: 1, kv: 601 });
    expect(first.stderr).toMatch(/500\/601 KV entries/);
    const after = await dump();
    const second = await runCli(["store", "migrate", "--to", url, "--db", dbPath, "--text"], h.env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/copied 0 work items, 1 check runs and 601 KV entries/);
    expect(await dump()).toEqual(after);
    expect(after).toHaveLength(601);
    expect(after.find((r) => r.key === "k001")).toEqual({
      ...{ ns: "app", key: "k001", value: null, updated_at: "5000", deleted: true },
    });
    expect(after.find((r) => r.key === "k599")).toMatchObject({ value: '{"i":599}' });
    expect(after.find((r) => r.key === "theme")).toMatchObject({ value: '"dark"' });
    expect(await sql(url, "SELECT name, status FROM check_runs")).toEqual([
      { name: "unit", status: "fail" },
    ]);
  }, 60_000);
});

async function waitForAsync(ok: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
