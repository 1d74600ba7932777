import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMesh, type TestMesh } from "../helpers/mesh.js";
import { Peer } from "../helpers/peer.js";

// KV across three real instances linked through cuttable TCP proxies
// (DR-0049): what a person writes anywhere is read everywhere, and writes made
// on every side of a partition converge once it heals.

let mesh: TestMesh;
let people: Peer[];

beforeAll(async () => {
  mesh = await startMesh(3);
  await mesh.waitLinked();
  people = await Promise.all(
    mesh.instances.map(async (inst) => {
      const p = await Peer.unix(inst.socket);
      await p.helloUser();
      return p;
    }),
  );
}, 30_000);
afterAll(async () => {
  for (const p of people ?? []) p.close();
  await mesh?.stop();
});

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Wait until every instance sees the links between `apart` pairs down. */
async function waitApart(pairs: [number, number][]) {
  const ids = mesh.instances.map((i) => i.id);
  await until("the partition", async () => {
    const lists = await Promise.all(mesh.instances.map((_, i) => mesh.list(i)));
    const down = pairs.every(([x, y]) =>
      [
        [x, y],
        [y, x],
      ].every(([a, b]) => lists[a!]!.peers.find((p) => p.id === ids[b!])?.reachable === false),
    );
    return down ? true : undefined;
  });
}

type Entry = { key: string; value?: unknown; updated_at: number; deleted?: true };

async function snapshot(p: Peer, ns: string): Promise<Entry[]> {
  const snap = await p.subscribe(`kv:${ns}`);
  await p.call("topic_unsubscribe", { topic: `kv:${ns}` });
  return (snap.data as { entries: Entry[] }).entries;
}

describe("KV across instances", () => {
  it("a kv:<ns> subscriber on one instance sees a write made on another, and a removal made on a third", async () => {
    const [a, b, c] = people as [Peer, Peer, Peer];
    await a.subscribe("kv:live");
    const wrote = await c.call<{ updated_at: number }>("kv_write", {
      ns: "live",
      key: "theme",
      value: { mode: "dark" },
    });
    const seen = await a.next((f) => f.topic === "kv:live" && !f.snapshot);
    expect(seen.data).toEqual({
      entries: [{ key: "theme", value: { mode: "dark" }, updated_at: wrote.updated_at }],
    });
    expect(seen.instance).toBe(mesh.instances[0]!.id);
    // b holds it too before it removes it.
    await until("b to hold the write", async () =>
      (await b.request("kv_read", { ns: "live", key: "theme" })).ok ? true : undefined,
    );
    await b.call("kv_delete", { ns: "live", key: "theme" });
    const removed = await a.next((f) => f.topic === "kv:live" && !f.snapshot);
    expect(removed.data).toEqual({
      entries: [{ key: "theme", updated_at: expect.any(Number), deleted: true }],
    });
    expect((await a.request("kv_read", { ns: "live", key: "theme" })).error?.code).toBe(
      "not_found",
    );
    await a.call("topic_unsubscribe", { topic: "kv:live" });
  });

  // The acceptance property, over real instances: few runs, each in its own
  // namespace on the same mesh.
  type Op =
    | { kind: "write"; at: number; key: string; value: unknown; past: number | undefined }
    | { kind: "delete"; at: number; key: string };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("write" as const),
        at: fc.integer({ min: 0, max: 2 }),
        key: fc.constantFrom("a", "b", "c", "d"),
        value: fc.oneof(
          fc.integer({ min: 0, max: 3 }),
          fc.constantFrom("x", "y", "日本"),
          fc.constant({ z: [1] }),
        ),
        // A stated stamp in the past, shared between writers on purpose.
        past: fc.option(fc.constantFrom(1000, 1001), { nil: undefined }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("delete" as const),
        at: fc.integer({ min: 0, max: 2 }),
        key: fc.constantFrom("a", "b", "c", "d"),
      }),
    },
  );
  let run = 0;

  it("KV writes on all three instances during a partition converge to the same values after it heals", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constant("split" as const)),
        fc.array(opArb, { minLength: 4, maxLength: 24 }),
        async (partition, ops) => {
          const ns = `prop${++run}`;
          const pairs: [number, number][] =
            partition === "split"
              ? [
                  [0, 1],
                  [0, 2],
                  [1, 2],
                ]
              : ([0, 1, 2].filter((j) => j !== partition).map((j) => [partition, j]) as [
                  number,
                  number,
                ][]);
          if (partition === "split") for (const i of [0, 1, 2]) mesh.isolate(i);
          else mesh.isolate(partition);
          await waitApart(pairs);
          // The model: per key, the greatest version by the kv-order rule. A
          // removal's stamp is the instance's clock, known only to lie in
          // [lo, hi]; each op gets its own millisecond range, so ranges never
          // overlap and comparing by `lo` orders them as their stamps do.
          const model = new Map<string, { lo: number; hi: number; json: string | null }>();
          const wins = (
            v: { lo: number; json: string | null },
            held?: { lo: number; json: string | null },
          ) => {
            if (held === undefined || v.lo !== held.lo) return held === undefined || v.lo > held.lo;
            if (v.json === null) return held.json !== null;
            if (held.json === null) return false;
            return Buffer.compare(Buffer.from(v.json), Buffer.from(held.json)) > 0;
          };
          let last = 0;
          for (const op of ops) {
            while (Date.now() <= last) await new Promise((r) => setTimeout(r, 1));
            const p = people[op.at]!;
            const lo = Date.now();
            let v: { lo: number; hi: number; json: string | null };
            if (op.kind === "write") {
              const stamp = op.past ?? lo;
              await p.call("kv_write", { ns, key: op.key, value: op.value, updated_at: stamp });
              v = { lo: stamp, hi: stamp, json: JSON.stringify(op.value) };
            } else {
              await p.call("kv_delete", { ns, key: op.key });
              v = { lo, hi: Date.now(), json: null };
            }
            last = Date.now();
            if (wins(v, model.get(op.key))) model.set(op.key, v);
          }
          mesh.heal();
          await mesh.waitLinked();
          const live = [...model.entries()]
            .filter(([, v]) => v.json !== null)
            .sort(([x], [y]) => (x < y ? -1 : 1))
            .map(([key, v]) => ({ key, value: JSON.parse(v.json!), updated_at: v.lo }));
          const snaps = await until("the three instances to agree", async () => {
            const s = await Promise.all(people.map((p) => snapshot(p, ns)));
            const same = s.every((x) => JSON.stringify(x) === JSON.stringify(live));
            return same ? s : undefined;
          });
          expect(snaps).toEqual([live, live, live]);
          for (const [key, v] of model) {
            const reads = await Promise.all(people.map((p) => p.request("kv_read", { ns, key })));
            for (const r of reads) {
              if (v.json === null) expect(r.error?.code).toBe("not_found");
              else
                expect({ value: r.value, updated_at: r.updated_at }).toEqual({
                  value: JSON.parse(v.json),
                  updated_at: v.lo,
                });
            }
          }
        },
      ),
      { numRuns: 10, endOnFailure: true },
    );
  }, 120_000);
});
