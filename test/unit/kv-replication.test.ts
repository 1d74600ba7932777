import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { KV_TOMBSTONE_RETENTION_MS, KV_VALUE_MAX_BYTES } from "../../src/contract/constants.js";
import { type KvVersion, kvWins } from "../../src/store/kv-order.js";
import {
  closeReplica,
  openReplica,
  type Replica,
  replicaSet,
  type StateRow,
  settle,
  stateOf,
} from "../helpers/kv-replicas.js";
import { memoryMesh } from "../helpers/memory-mesh.js";

// KV replication over MeshPort frames (DR-0049), with the instance's real
// SQLite store on each replica and links in memory that the test cuts.

const ids = ["a", "b", "c"] as const;
let open: ReturnType<typeof replicaSet> | undefined;
afterEach(() => {
  open?.close();
  open = undefined;
});

function three() {
  open = replicaSet(ids);
  const [a, b, c] = open.replicas as [Replica, Replica, Replica];
  return { ...open, a, b, c };
}

const live = (r: Replica, ns = "app") => r.kv.list(ns);

describe("KV replication", () => {
  it("a write on one instance reaches the others, and their kv:<ns> subscribers", async () => {
    const { mesh, replicas, a, b, c } = three();
    await settle(mesh, replicas);
    await a.kv.write("app", "theme", { dark: true });
    await settle(mesh, replicas);
    for (const r of [b, c]) {
      expect(r.kv.read("app", "theme").value).toEqual({ dark: true });
      expect(r.heard).toEqual([{ ns: "app", key: "theme", deleted: false, value: { dark: true } }]);
    }
  });

  it("a removal travels as a tombstone and subscribers hear the removal", async () => {
    const { mesh, replicas, a, b, c } = three();
    await a.kv.write("app", "k", 1);
    await settle(mesh, replicas);
    b.clock.advance(5);
    await b.kv.delete("app", "k");
    await settle(mesh, replicas);
    for (const r of [a, c]) {
      expect(() => r.kv.read("app", "k")).toThrow(expect.objectContaining({ code: "not_found" }));
      expect(r.heard.at(-1)).toEqual({ ns: "app", key: "k", deleted: true });
    }
    expect(stateOf(a)).toEqual(stateOf(b));
    expect(stateOf(c)).toEqual(stateOf(b));
    expect(stateOf(a)[0]).toMatchObject({ deleted: 1, value: null });
  });

  it("equal stamps written apart resolve the same everywhere: removal, then the greater JSON", async () => {
    const { mesh, replicas, a, b, c } = three();
    mesh.cut("a", "b");
    mesh.cut("a", "c");
    mesh.cut("b", "c");
    await a.kv.write("app", "x", "apple", 1000);
    await b.kv.write("app", "x", "banana", 1000);
    await c.kv.write("app", "x", "banan", 1000);
    await a.kv.write("app", "y", "zzz", 2000);
    await c.kv.delete("app", "y", 2000);
    mesh.heal();
    await settle(mesh, replicas);
    for (const r of replicas) {
      expect(r.kv.read("app", "x")).toEqual({ value: "banana", updated_at: 1000 });
      expect(() => r.kv.read("app", "y")).toThrow();
      expect(stateOf(r)).toEqual(stateOf(a));
    }
  });

  it("a write with an explicit past stamp does not displace a newer value anywhere", async () => {
    const { mesh, replicas, a, b } = three();
    await a.kv.write("app", "k", "new", 5000);
    await settle(mesh, replicas);
    expect(await b.kv.write("app", "k", "late", 4000)).toBe(5000);
    await settle(mesh, replicas);
    for (const r of replicas) expect(r.kv.read("app", "k").value).toBe("new");
  });

  it("sends a change once to each peer and never back to where it came from", async () => {
    const { mesh, replicas, a } = three();
    await settle(mesh, replicas);
    const before = mesh.sent().length;
    await a.kv.write("app", "k", 1);
    await settle(mesh, replicas);
    const carried = mesh
      .sent()
      .slice(before)
      .filter((s) => s.t === "changes");
    // a → b and a → c; b and c may each pass it on to the other (whoever
    // stored it first), which the other does not store again.
    expect(carried.filter((s) => s.to === "a")).toEqual([]);
    expect(
      carried
        .filter((s) => s.from === "a")
        .map((s) => s.to)
        .sort(),
    ).toEqual(["b", "c"]);
    expect(carried.length).toBeLessThanOrEqual(4);
  });

  it("a partial partition still converges: a change reaches a cut-off peer through a third", async () => {
    const { mesh, replicas, a, c } = three();
    mesh.cut("a", "c");
    await a.kv.write("app", "k", "via b");
    await settle(mesh, replicas);
    expect(c.kv.read("app", "k").value).toBe("via b");
  });

  it("a link replaced under way (up again without going down, frames lost) starts both streams again", async () => {
    const { mesh, replicas, a, b } = three();
    await settle(mesh, replicas);
    mesh.cut("b", "c");
    mesh.cut("a", "c");
    // b's frames to a and a's acknowledgements are lost with the old link;
    // only a hears the new one come up.
    void b.kv.write("app", "lost", 1);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    mesh.replace("a", "b");
    await b.kv.write("app", "after", 2);
    // c stays cut, so nothing reaches a but over the new link.
    await settle(mesh, replicas);
    expect(a.kv.read("app", "lost").value).toBe(1);
    expect(a.kv.read("app", "after").value).toBe(2);
    expect(stateOf(a)).toEqual(stateOf(b));
  });

  it("a partition's writes catch up in a few large frames after the heal", async () => {
    const { mesh, replicas, a, c } = three();
    mesh.cut("a", "c");
    mesh.cut("b", "c");
    await Promise.all(
      Array.from({ length: 3000 }, (_, i) => a.kv.write("bulk", `key-${i}`, { i })),
    );
    await settle(mesh, replicas);
    const before = mesh.sent().length;
    mesh.heal();
    await settle(mesh, replicas);
    expect(live(c, "bulk")).toHaveLength(3000);
    const toC = mesh
      .sent()
      .slice(before)
      .filter((s) => s.to === "c" && s.t === "changes");
    expect(toC.reduce((n, s) => n + s.entries, 0)).toBeGreaterThanOrEqual(3000);
    // 512 rows per frame at most: 3,000 keys from each of a and b is ~12
    // frames, not one per key.
    expect(toC.length).toBeLessThanOrEqual(16);
    for (const r of replicas) expect(stateOf(r)).toEqual(stateOf(a));
  });

  it("values near the size limit travel in frames within MAX_FRAME_BYTES", async () => {
    const { mesh, replicas, a, b } = three();
    const big = "x".repeat(KV_VALUE_MAX_BYTES - 2);
    await a.kv.write("app", "big1", big);
    await a.kv.write("app", "big2", big);
    await a.kv.write("app", "small", 1);
    await settle(mesh, replicas);
    expect(b.kv.read("app", "big2").value).toBe(big);
    expect(b.kv.read("app", "small").value).toBe(1);
    // memoryMesh refuses any frame over MAX_FRAME_BYTES by throwing.
    expect(mesh.stats().largest).toBeGreaterThan(KV_VALUE_MAX_BYTES);
  });

  it("a restarted instance catches up from its mark, not from the start", async () => {
    const { mesh, replicas, a, b, c } = three();
    for (let i = 0; i < 50; i++) await a.kv.write("app", `k${i}`, i);
    await settle(mesh, replicas);
    mesh.cut("a", "c");
    mesh.cut("b", "c");
    closeReplica(c);
    await a.kv.write("app", "after", "restart");
    await b.kv.delete("app", "k1");
    const c2 = openReplica("c", c.path, mesh, c.clock);
    replicas[2] = c2;
    const before = mesh.sent().length;
    mesh.heal();
    await settle(mesh, replicas);
    expect(c2.kv.read("app", "after").value).toBe("restart");
    expect(() => c2.kv.read("app", "k1")).toThrow();
    const toC = mesh
      .sent()
      .slice(before)
      .filter((s) => s.to === "c" && s.t === "changes");
    expect(toC.reduce((n, s) => n + s.entries, 0)).toBeLessThanOrEqual(4);
    expect(stateOf(c2)).toEqual(stateOf(a));
  });

  it("a peer whose store was wiped is sent everything again", async () => {
    const { mesh, replicas, dir, a, b } = three();
    for (let i = 0; i < 20; i++) await a.kv.write("app", `k${i}`, i);
    await settle(mesh, replicas);
    mesh.cut("a", "c");
    mesh.cut("b", "c");
    closeReplica(replicas[2]!);
    const fresh = openReplica("c", `${dir}/c-wiped.db`, mesh, replicas[2]!.clock);
    replicas[2] = fresh;
    mesh.heal();
    await settle(mesh, replicas);
    expect(live(fresh)).toHaveLength(20);
    expect(stateOf(fresh)).toEqual(stateOf(b));
  });

  it("a peer whose file was restored from an older copy is not skipped past by the others' marks", async () => {
    const { mesh, replicas, dir, a, b } = three();
    await a.kv.write("app", "k1", 1);
    await a.kv.write("app", "k2", 2);
    a.store.db.exec(`VACUUM INTO '${dir}/a-backup.db'`);
    await a.kv.write("app", "k3", 3);
    await a.kv.write("app", "k4", 4);
    await settle(mesh, replicas);
    mesh.cut("a", "b");
    mesh.cut("a", "c");
    closeReplica(a);
    const restored = openReplica("a", `${dir}/a-backup.db`, mesh, a.clock);
    replicas[0] = restored;
    // Its sequence is behind what b and c hold of it; the next write takes a
    // place they believe they already have.
    await restored.kv.write("app", "after", "restore");
    mesh.heal();
    await settle(mesh, replicas);
    expect(b.kv.read("app", "after").value).toBe("restore");
    for (const r of replicas) expect(stateOf(r)).toEqual(stateOf(b));
    expect(live(restored)).toHaveLength(5);
  });

  it("tombstones are kept 7 days after they were stored, then purged; the sequence never goes back", async () => {
    const { mesh, replicas, a } = three();
    await a.kv.write("app", "k", 1);
    await a.kv.delete("app", "k");
    await settle(mesh, replicas);
    const seq = a.store.kv.seq();
    a.clock.advance(KV_TOMBSTONE_RETENTION_MS - 1);
    expect(await a.replication.purge()).toBe(0);
    a.clock.advance(2);
    expect(await a.replication.purge()).toBe(1);
    expect(stateOf(a)).toEqual([]);
    // A purge of the newest row does not free its place for the next write,
    // which a peer past that place would otherwise never be sent.
    await a.kv.write("app", "k2", 2);
    expect(a.store.kv.changesSince(seq, 10).map((c) => c.key)).toEqual(["k2"]);
    await settle(mesh, replicas);
    for (const r of replicas) expect(r.kv.read("app", "k2").value).toBe(2);
  });

  it("a malformed entry from a peer is refused alone, and the rest is stored and acknowledged", async () => {
    // A hand-driven peer "x" on the same links, speaking the frames itself.
    const mesh2 = memoryMesh(["b", "x"]);
    open = replicaSet(["b"], mesh2);
    const b2 = open.replicas[0]!;
    const x = mesh2.port("x");
    const heard: Record<string, unknown>[] = [];
    x.onFrame("kv", (_from, f) => {
      heard.push(f);
      if (f.t === "pull") {
        x.send("b", {
          mesh: "kv",
          t: "changes",
          replica: "x-life",
          gen: f.gen,
          upto: 3,
          e: [
            ["app", "good", 10, { ok: 1 }],
            ["App", "bad-ns", 10, 1],
            ["app", "bad-stamp", -1, 1],
            "junk",
          ],
        });
      }
    });
    x.send("b", { mesh: "kv", t: "hello", replica: "x-life" });
    await settle(mesh2, [b2]);
    expect(b2.kv.read("app", "good").value).toEqual({ ok: 1 });
    expect(stateOf(b2).map((r) => r.key)).toEqual(["good"]);
    expect(heard.map((f) => f.t)).toEqual(["hello", "pull", "ack"]);
    expect(heard[1]).toMatchObject({ of: "x-life", from: 0 });
    expect(heard[2]).toMatchObject({ upto: 3 });
    expect(b2.store.kv.mark("x")).toEqual({ replica: "x-life", seq: 3 });
  });
});

// --- The acceptance property -------------------------------------------------

type Op =
  | { kind: "write"; at: number; key: string; value: unknown; stamp: number | undefined }
  | { kind: "delete"; at: number; key: string; stamp: number | undefined }
  | { kind: "link"; up: boolean; x: number; y: number }
  | { kind: "advance"; at: number; ms: number }
  | { kind: "turn" };

const replicaIx = fc.integer({ min: 0, max: 2 });
const keyArb = fc.constantFrom("a", "b", "c", "d", "é", "ünï");
// Explicit stamps collide on purpose (equal `updated_at` from different
// writers) and lie in the past of the replicas' clocks.
const stampArb = fc.option(fc.constantFrom(1000, 1001, 1002, 1_700_000_000_005), {
  nil: undefined,
});
const valueArb = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom("x", "y", "z", "ß", "日本"),
  fc.record({ n: fc.integer({ min: 0, max: 2 }) }),
  fc.constant(null),
  fc.constant([1, "two"]),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("write" as const),
      at: replicaIx,
      key: keyArb,
      value: valueArb,
      stamp: stampArb,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("delete" as const),
      at: replicaIx,
      key: keyArb,
      stamp: stampArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("link" as const),
      up: fc.boolean(),
      x: replicaIx,
      y: replicaIx,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      at: replicaIx,
      ms: fc.integer({ min: 0, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "turn" as const }) },
);

describe("KV replication property", () => {
  it("writes on all three instances during random partitions converge to the same values after the heal", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 60 }),
        fc.boolean(),
        async (ops, together) => {
          const set = replicaSet(ids);
          try {
            const { mesh, replicas } = set;
            // The model: per key, the greatest version written anywhere by kvWins.
            const model = new Map<string, KvVersion>();
            const offer = (key: string, v: KvVersion) => {
              if (kvWins(v, model.get(key))) model.set(key, v);
            };
            const pending: Promise<unknown>[] = [];
            for (const op of ops) {
              if (op.kind === "link") {
                if (op.x !== op.y) mesh[op.up ? "heal" : "cut"](ids[op.x]!, ids[op.y]!);
                continue;
              }
              if (op.kind === "turn") {
                await new Promise((r) => setImmediate(r));
                continue;
              }
              const r = replicas[op.at]!;
              if (op.kind === "advance") {
                r.clock.advance(op.ms);
                continue;
              }
              const stamp = op.stamp ?? r.clock.now();
              const done =
                op.kind === "write"
                  ? r.kv.write("app", op.key, op.value, stamp)
                  : r.kv.delete("app", op.key, stamp);
              offer(op.key, {
                updated_at: stamp,
                json: op.kind === "write" ? JSON.stringify(op.value) : null,
              });
              // Some writes are left in flight together, as under load.
              if (together) pending.push(done);
              else await done;
            }
            await Promise.all(pending);
            mesh.heal();
            await settle(mesh, replicas);
            const expected: StateRow[] = [...model.entries()]
              .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
              .map(([key, v]) => ({
                ns: "app",
                key,
                value: v.json,
                updated_at: v.updated_at,
                deleted: v.json === null ? 1 : 0,
              }));
            for (const r of replicas) expect(stateOf(r)).toEqual(expected);
          } finally {
            set.close();
          }
        },
      ),
      { numRuns: Number(process.env.KVREP_RUNS ?? 150), endOnFailure: true },
    );
  }, 120_000);
});
