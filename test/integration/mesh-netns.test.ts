import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type KvVersion, kvWins } from "../../src/store/kv-order.js";
import { inboxRows } from "../helpers/db.js";
import type { TestInstance } from "../helpers/instance.js";
import { type NetnsMesh, netnsSupport, startNetnsMesh } from "../helpers/netns.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 15 item 3: the mesh under a real network partition. Three instances,
// each in its own network namespace behind a forwarder on its own address;
// one is cut off by taking its veth down at the bridge — a silent partition,
// no RST and no FIN, which only the heartbeats can notice.

if (!netnsSupport.ok)
  console.warn(`mesh-netns: the real-partition tests do NOT run here: ${netnsSupport.why}`);

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

type PeersData = { instances?: { id?: string; reachable: boolean }[] };
type Entry = { key: string; value?: unknown; updated_at: number };

describe.runIf(netnsSupport.ok)(
  `mesh across network namespaces${netnsSupport.ok ? "" : ` (not run: ${netnsSupport.why})`}`,
  () => {
    let net: NetnsMesh;
    let A: TestInstance;
    let B: TestInstance;
    let C: TestInstance;
    const opened: Peer[] = [];

    beforeAll(async () => {
      net = await startNetnsMesh(3, { heartbeatMs: 200, deadMs: 1200, backoffMs: 150 });
      [A, B, C] = net.instances as [TestInstance, TestInstance, TestInstance];
      await net.waitLinked();
    }, 30_000);
    afterAll(async () => {
      for (const p of opened) p.close();
      await net?.stop();
    });

    async function person(inst: TestInstance) {
      const p = await Peer.unix(inst.socket);
      opened.push(p);
      await p.helloUser();
      return p;
    }
    async function session(inst: TestInstance, sid: string) {
      const p = await Peer.unix(inst.socket);
      opened.push(p);
      await p.helloSession(sid);
      return p;
    }
    /** The next `peers` frame `watcher` gets from its own instance showing
     * `id` with `reachable`. */
    function showsReachable(watcher: Peer, self: TestInstance, id: string, reachable: boolean) {
      return watcher.next(
        (f) =>
          f.topic === "peers" &&
          f.instance === self.id &&
          (f.data as PeersData).instances?.find((i) => i.id === id)?.reachable === reachable,
        20_000,
      );
    }
    async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const got = await fn();
        if (got !== undefined) return got;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    it("the instances link over the namespaces' addresses, each under its http.endpoint", async () => {
      const lists = await Promise.all([0, 1, 2].map((i) => net.list(i)));
      lists.forEach((list, i) => {
        expect(list.peers.map((p) => p.endpoint).sort()).toEqual(
          net.endpoints.filter((_, j) => j !== i).sort(),
        );
        expect(list.peers.every((p) => p.reachable)).toBe(true);
      });
      // Not loopback: the endpoints are three different hosts.
      expect(new Set(net.endpoints.map((e) => new URL(e).hostname)).size).toBe(3);
      for (const e of net.endpoints) expect(new URL(e).hostname).not.toBe("127.0.0.1");
    });

    it("B cut off silently: seen unreachable by the heartbeats, refused fast, nothing held; A↔C work on; KV written everywhere converges after healing", async () => {
      const [sa, sb, sc] = [newSid(), newSid(), newSid()];
      const a = await session(A, sa);
      const b = await session(B, sb);
      const c = await session(C, sc);
      await b.subscribe("inbox");
      await c.subscribe("inbox");
      const [pa, pb, pc] = [await person(A), await person(B), await person(C)];
      const [watchA, watchC] = [await person(A), await person(C)];
      await watchA.subscribe("peers");
      await watchC.subscribe("peers");
      // B's session is known on A before the cut (its owner is read from peers).
      await until("A to route to B's session", async () =>
        (await a.request("message_send", { to: sb, text: "before" })).delivered === true
          ? true
          : undefined,
      );

      const downOnA = showsReachable(watchA, A, B.id, false);
      const downOnC = showsReachable(watchC, C, B.id, false);
      const cutAt = Date.now();
      net.isolate(1);
      await Promise.all([downOnA, downOnC]);
      const noticed = Date.now() - cutAt;
      // Nothing told A or C: only silence for the dead time can (a beat was
      // heard at most one beat before the cut). The upper bound is the timers'
      // (dead time + one beat to check) with room for a loaded machine.
      const { heartbeatMs, deadMs } = net.timers;
      expect(noticed).toBeGreaterThanOrEqual(deadMs - heartbeatMs);
      expect(noticed).toBeLessThan(deadMs + heartbeatMs + 5_000);
      // B, on its side of the cut, sees both of the others unreachable.
      await until("B to see A and C gone", async () =>
        (await net.list(1)).peers.every((p) => !p.reachable) ? true : undefined,
      );

      // Ops and messages aimed at B's session: refused, held nowhere.
      const heldBefore = inboxRows(B.stateDir).filter((r) => r.sid === sb).length;
      expect((await pa.request("session_kill", { sid: sb })).error).toMatchObject({
        code: "instance_unreachable",
      });
      expect(await a.call("message_send", { to: sb, text: "lost?" })).toEqual({
        delivered: false,
        reason: "instance_unreachable",
      });
      expect(await c.call("message_send", { to: sb, text: "lost too?" })).toEqual({
        delivered: false,
        reason: "instance_unreachable",
      });
      for (const inst of [A, C])
        expect(inboxRows(inst.stateDir).filter((r) => r.sid === sb)).toEqual([]);
      expect(inboxRows(B.stateDir).filter((r) => r.sid === sb)).toHaveLength(heldBefore);

      // A and C keep working together across the partition.
      const arrival = c.next((f) => f.topic === "inbox" && !f.snapshot);
      expect(await a.call("message_send", { to: sc, text: "A to C, B away" })).toEqual({
        delivered: true,
      });
      expect(((await arrival).data as { text: string }[])[0]).toMatchObject({
        from: sa,
        text: "A to C, B away",
      });

      // KV on all three sides: conflicting keys, removals. The model: per key
      // the winner by kvWins. A removal is stamped by its instance's clock
      // somewhere in [lo, hi]; every op runs in its own milliseconds, so the
      // ranges never overlap and `lo` orders a removal as its stamp does.
      const people = [pa, pb, pc];
      const ns = "netns";
      const model = new Map<string, KvVersion>();
      let last = 0;
      const op = async (at: number, key: string, value?: unknown, stamp?: number) => {
        while (Date.now() <= last) await new Promise((r) => setTimeout(r, 1));
        const lo = Date.now();
        let v: KvVersion;
        if (value === undefined) {
          await people[at]!.call("kv_delete", { ns, key });
          v = { updated_at: lo, json: null };
        } else {
          const wrote = await people[at]!.call<{ updated_at: number }>("kv_write", {
            ns,
            key,
            value,
            ...(stamp === undefined ? {} : { updated_at: stamp }),
          });
          v = { updated_at: wrote.updated_at, json: JSON.stringify(value) };
        }
        last = Date.now();
        if (kvWins(v, model.get(key))) model.set(key, v);
      };
      await op(0, "k1", "from A");
      await op(1, "k1", "from B"); // later: B's wins, though B is cut off
      await op(2, "k2", { c: 1 }, 1000);
      await op(1, "k2", { b: 1 }, 1000); // same stamp: the greater JSON ({"c":…}) wins
      await op(0, "k3", 3);
      await op(1, "k3"); // B's later removal wins over A's value
      await op(1, "k4", "b");
      await op(2, "k4"); // C's later removal wins over B's value
      await op(2, "k5", "c");
      await op(0, "k5", "a");
      await op(0, "k6");
      await op(1, "k6", "old", 1001); // an old stamp loses to A's removal
      // A↔C replicate during the partition: A reads C's k4 removal.
      await until("A to hold C's removal", async () =>
        (await pa.request("kv_read", { ns, key: "k4" })).error?.code === "not_found"
          ? true
          : undefined,
      );
      const live: Entry[] = [...model.entries()]
        .filter(([, v]) => v.json !== null)
        .sort(([x], [y]) => (x < y ? -1 : 1))
        .map(([key, v]) => ({ key, value: JSON.parse(v.json!), updated_at: v.updated_at }));
      // The script really conflicts: what wins comes from every side.
      expect(live.map((e) => [e.key, e.value])).toEqual([
        ["k1", "from B"],
        ["k2", { c: 1 }],
        ["k5", "a"],
      ]);

      const upOnA = showsReachable(watchA, A, B.id, true);
      net.heal();
      await net.waitLinked(30_000);
      await upOnA;
      const snapshot = async (p: Peer) => {
        const snap = await p.subscribe(`kv:${ns}`);
        await p.call("topic_unsubscribe", { topic: `kv:${ns}` });
        return (snap.data as { entries: Entry[] }).entries;
      };
      const agreed = await until("the three instances to agree", async () => {
        const s = await Promise.all(people.map(snapshot));
        return s.every((x) => JSON.stringify(x) === JSON.stringify(live)) ? s : undefined;
      });
      expect(agreed).toEqual([live, live, live]);
      for (const key of ["k3", "k4", "k6"])
        for (const p of people)
          expect((await p.request("kv_read", { ns, key })).error?.code).toBe("not_found");

      // B's session is reachable again: a message to it is delivered.
      const back = b.next(
        (f) =>
          f.topic === "inbox" &&
          !f.snapshot &&
          (f.data as { text: string }[]).some((m) => m.text === "back"),
      );
      await until("a message to B's session to be delivered", async () =>
        (await a.request("message_send", { to: sb, text: "back" })).delivered === true
          ? true
          : undefined,
      );
      expect(((await back).data as { from: string }[])[0]).toMatchObject({ from: sa });
    }, 60_000);
  },
);
