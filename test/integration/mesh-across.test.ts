import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { foldTopicFrame } from "../../src/contract/index.js";
import { inboxRows } from "../helpers/db.js";
import { requiredPath } from "../helpers/env.js";
import { fakeHarness } from "../helpers/harness-process.js";
import type { TestInstance } from "../helpers/instance.js";
import { startMesh, type TestMesh } from "../helpers/mesh.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 15 item 1, second part (DR-0048): ops, messages and the per-instance
// topics across three real instances linked over real sockets, each pair
// through a proxy the test can cut.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

type Rows = { sid: string; instance: string }[];
type PeersData = {
  peers: Rows;
  last_live: (Rows[number] & { state?: string })[];
  instances?: { id?: string; reachable: boolean }[];
};

let mesh: TestMesh;
let A: TestInstance;
let B: TestInstance;
let C: TestInstance;
/** A person on A watching `peers`. */
let watcher: Peer;
const opened: Peer[] = [];

beforeAll(async () => {
  mesh = await startMesh(3);
  [A, B, C] = mesh.instances as [TestInstance, TestInstance, TestInstance];
  await mesh.waitLinked();
  watcher = await person(A);
  await watcher.subscribe("peers");
}, 60_000);
afterAll(async () => {
  for (const p of opened) p.close();
  await mesh.stop();
});

async function session(inst: TestInstance, sid: string, meta: Record<string, unknown> = {}) {
  const p = await Peer.unix(inst.socket);
  opened.push(p);
  await p.helloSession(sid, meta);
  return p;
}

async function person(inst: TestInstance) {
  const p = await Peer.unix(inst.socket);
  opened.push(p);
  await p.helloUser();
  return p;
}

/** A frame from `inst` on the watcher's `peers` listing `sid` (or every one
 * of several) in `list`. */
function shows(
  inst: TestInstance,
  sid: string | string[],
  list: "peers" | "last_live",
  state?: string,
) {
  const sids = typeof sid === "string" ? [sid] : sid;
  return watcher.next((f) => {
    if (f.topic !== "peers" || f.instance !== inst.id) return false;
    const rows = (f.data as PeersData)[list] as { sid: string; state?: string }[];
    return sids.every((s) =>
      rows.some((r) => r.sid === s && (state === undefined || r.state === state)),
    );
  });
}

describe("across instances", () => {
  it("a person on A sees every instance's rows in peers, each frame with its instance, folded per instance", async () => {
    const [sb, sc] = [newSid(), newSid()];
    const seen = Promise.all([shows(B, sb, "peers"), shows(C, sc, "peers")]);
    await session(B, sb);
    await session(C, sc);
    await seen;
    const fresh = await person(A);
    const frames: Pushed[] = [];
    fresh.client.onPushed((p) => {
      if (p.topic === "peers") frames.push(p);
    });
    await fresh.call("topic_subscribe", { topic: "peers" });
    await expect.poll(() => new Set(frames.map((f) => f.instance)).size).toBe(3);
    expect(frames[0]).toMatchObject({ snapshot: true, instance: A.id });
    let held: Record<string, PeersData> = {};
    for (const f of frames) {
      // Every row a frame carries is of the instance the frame names.
      for (const row of (f.data as PeersData).peers) expect(row.instance).toBe(f.instance);
      held = foldTopicFrame(held, f as never) as Record<string, PeersData>;
    }
    expect(Object.keys(held).sort()).toEqual([A.id, B.id, C.id].sort());
    expect(held[B.id]!.peers.map((r) => r.sid)).toContain(sb);
    expect(held[C.id]!.peers.map((r) => r.sid)).toContain(sc);
  });

  it("agents, watched on A, come from every instance, each as its own frame", async () => {
    const p = await person(A);
    const frames: Pushed[] = [];
    p.client.onPushed((f) => {
      if (f.topic === "agents") frames.push(f);
    });
    await p.call("topic_subscribe", { topic: "agents" });
    // Relayed only while held here: the peers' snapshots follow the subscription.
    await expect
      .poll(() => new Set(frames.map((f) => f.instance)), { timeout: 10_000 })
      .toEqual(new Set([A.id, B.id, C.id]));
    for (const f of frames) expect(f.data).toMatchObject({ agents: expect.any(Array) });
    await p.call("topic_unsubscribe", { topic: "agents" });
  });

  it("a session on A messages a session on C subscribed to inbox: delivered, from A's session", async () => {
    const [sa, sc] = [newSid(), newSid()];
    const a = await session(A, sa);
    const c = await session(C, sc);
    await c.subscribe("inbox");
    await shows(C, sc, "peers");
    const arrival = c.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await a.call("message_send", { to: sc, text: "from A" })).toEqual({ delivered: true });
    const [m] = (await arrival).data as { from: string; text: string; mid: string }[];
    expect(m).toMatchObject({ from: sa, text: "from A" });
    // Built where the addressee lives.
    expect(m!.mid.startsWith(`${C.id}/`)).toBe(true);
  });

  it("holds across instances with the reasons of one instance: preparing, paused, disappeared", async () => {
    const [sa, sc, near] = [newSid(), newSid(), newSid()];
    const a = await session(A, sa);
    const place = { repo_root: "/src/widgets", cwd: "/src/widgets-c", ws: "widgets-c" };
    const c = await session(C, sc, { ...place, cwd: "/src/widgets-1", ws: "w1" });
    await session(C, near, place);
    // A session in the same repository on B, once C has heard of it.
    const onC = await person(C);
    const nearB = newSid();
    const heard = onC.next(
      (f) =>
        f.topic === "peers" &&
        f.instance === B.id &&
        (f.data as PeersData).peers.some((r) => r.sid === nearB),
    );
    await onC.call("topic_subscribe", { topic: "peers" });
    await session(B, nearB, { ...place, ws: "widgets-b", cwd: "/src/widgets-b" });
    await heard;
    await shows(C, [sc, near], "peers");
    expect(await a.call("message_send", { to: sc, text: "one" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
    // The message is C's: its session receives it when it listens.
    expect(((await c.subscribe("inbox")).data as { text: string }[]).map((m) => m.text)).toEqual([
      "one",
    ]);

    await c.call("session_stopping", { reason: "prompt_input_exit" });
    const paused = shows(C, sc, "last_live", "paused");
    c.close();
    await paused;
    expect(await a.call("message_send", { to: sc, text: "two" })).toEqual({
      delivered: false,
      reason: "paused",
      candidates: [
        { sid: near, ws: "widgets-c", instance: C.id },
        { sid: nearB, ws: "widgets-b", instance: B.id },
      ],
    });

    const gone = newSid();
    const g = await session(C, gone);
    await shows(C, gone, "peers");
    const lost = shows(C, gone, "last_live", "disappeared");
    g.close();
    await lost;
    expect(await a.call("message_send", { to: gone, text: "three" })).toMatchObject({
      delivered: false,
      reason: "disappeared",
    });
    // Held on C, never on A.
    expect(inboxRows(A.stateDir)).toEqual([]);
    expect(inboxRows(C.stateDir).filter((r) => r.sid === gone)).toHaveLength(1);
  });

  it("a person on A stops a session on C: C signals its harness process", async () => {
    const sid = newSid();
    const h = await fakeHarness(requiredPath(C.env, "CLAUDE_CONFIG_DIR"), sid);
    await session(C, sid);
    await shows(C, sid, "peers");
    const p = await person(A);
    expect(await p.call("session_kill", { sid })).toEqual({ terminated: true });
    expect(await h.exited).toBe("exit 0");
    expect(h.signals()).toEqual(["SIGINT"]);
  });

  it("the owner decides again who may: a session's user-only op is refused, a forwarded caller is judged as itself", async () => {
    const [sa, sc] = [newSid(), newSid()];
    const a = await session(A, sa);
    await session(C, sc);
    await shows(C, sc, "peers");
    expect((await a.request("session_kill", { sid: sc })).error).toMatchObject({
      code: "forbidden",
    });
    // transcript_read admits sessions, about themselves only: A lets it go,
    // C refuses it for the session A's request speaks for.
    const refused = await a.request("transcript_read", { sid: sc });
    expect(refused.error).toMatchObject({
      code: "forbidden",
      msg: "a session may read only its own transcript",
    });
    // The same op for a person passes C's checks (the transcript is absent).
    const p = await person(A);
    expect((await p.request("transcript_read", { sid: sc })).error?.code).not.toBe("forbidden");
  });

  it("an isolated instance is unreachable, held nowhere, and shown so; healed, it works again", async () => {
    const [sa, sb] = [newSid(), newSid()];
    const a = await session(A, sa);
    const b = await session(B, sb);
    await shows(B, sb, "peers");
    const p = await person(A);
    const down = watcher.next(
      (f) =>
        f.instance === A.id &&
        (f.data as PeersData).instances?.find((i) => i.id === B.id)?.reachable === false,
      20_000,
    );
    mesh.isolate(1);
    await down;
    expect((await p.request("session_kill", { sid: sb })).error).toMatchObject({
      code: "instance_unreachable",
    });
    expect(await a.call("message_send", { to: sb, text: "lost?" })).toEqual({
      delivered: false,
      reason: "instance_unreachable",
    });
    // Unknown everywhere while B is out of reach: B might hold it.
    expect(await a.call("message_send", { to: newSid(), text: "?" })).toEqual({
      delivered: false,
      reason: "instance_unreachable",
    });
    expect(inboxRows(A.stateDir).filter((r) => r.sid === sb)).toEqual([]);

    mesh.heal();
    await mesh.waitLinked(30_000);
    await b.subscribe("inbox");
    await expect
      .poll(async () => (await a.call("message_send", { to: sb, text: "back" })).delivered, {
        timeout: 10_000,
      })
      .toBe(true);
    await vi.waitFor(() =>
      expect(inboxRows(B.stateDir).filter((r) => r.sid === sb && r.state === "held")).toEqual([]),
    );
  }, 60_000);

  it("relay storm: sessions coming and going on B and C reach a person on A coalesced, ending right", async () => {
    const p = await person(A);
    const frames: Pushed[] = [];
    p.client.onPushed((f) => {
      if (f.topic === "peers") frames.push(f);
    });
    await p.call("topic_subscribe", { topic: "peers" });
    const before = frames.length;
    const started = Date.now();
    const changes = 120;
    const stayers: Record<string, string[]> = { [B.id]: [], [C.id]: [] };
    await Promise.all(
      [B, C].map(async (inst) => {
        for (let i = 0; i < changes / 2; i++) {
          const sid = newSid();
          const s = await Peer.unix(inst.socket);
          await s.helloSession(sid);
          if (i % 10 === 0) {
            opened.push(s);
            stayers[inst.id]!.push(sid);
          } else s.close();
        }
      }),
    );
    // The final state: what B and C themselves say, read as it settles (the
    // last closes may still be on their way when the storm's loop ends).
    for (const inst of [B, C]) {
      const own = await person(inst);
      let truth = ((await own.subscribe("peers")).data as PeersData).peers;
      own.client.onPushed((f) => {
        if (f.topic === "peers" && f.instance === inst.id) truth = (f.data as PeersData).peers;
      });
      const sids = (peers: PeersData["peers"] | undefined) => peers?.map((r) => r.sid).sort();
      for (const sid of stayers[inst.id]!) expect(sids(truth)).toContain(sid);
      await expect
        .poll(
          () => {
            const last = frames.filter((f) => f.instance === inst.id).at(-1);
            return (
              sids((last?.data as PeersData | undefined)?.peers)?.join() === sids(truth)!.join()
            );
          },
          { timeout: 10_000 },
        )
        .toBe(true);
    }
    // Coalesced: each of 2 × 120 row changes did not become a frame.
    const relayed = frames.slice(before).filter((f) => f.instance !== A.id).length;
    expect(relayed).toBeLessThan(changes);
    // Paced at 100 ms per instance (+ the last one, + a snapshot each).
    expect(relayed).toBeLessThanOrEqual(2 * (Math.ceil((Date.now() - started) / 100) + 2));
    for (const inst of [A, B, C])
      expect(inst.log().filter((l) => String(l.msg).includes("frame refused"))).toEqual([]);
  }, 60_000);

  it("an instance away for 7 days is no longer listed; back, it is again", async () => {
    const sc = newSid();
    await session(C, sc);
    await shows(C, sc, "peers");
    const down = watcher.next(
      (f) =>
        f.instance === A.id &&
        (f.data as PeersData).instances?.find((i) => i.id === C.id)?.reachable === false,
      20_000,
    );
    mesh.isolate(2);
    await down;
    const instancesSeen = async () => {
      const p = await person(A);
      const frames: Pushed[] = [];
      p.client.onPushed((f) => {
        if (f.topic === "peers") frames.push(f);
      });
      await p.call("topic_subscribe", { topic: "peers" });
      // A round trip after the snapshot: every frame of it has arrived.
      await p.call("instance_ping");
      p.close();
      return new Set(frames.map((f) => f.instance));
    };
    // Away, but kept.
    expect(await instancesSeen()).toEqual(new Set([A.id, B.id, C.id]));
    await A.advanceClock(7 * 24 * 3_600_000 + 60_000);
    expect(await instancesSeen()).toEqual(new Set([A.id, B.id]));
    mesh.heal();
    await mesh.waitLinked(30_000);
    // C's fresh snapshot brings its values back, and with them its sessions.
    await expect.poll(instancesSeen, { timeout: 10_000 }).toEqual(new Set([A.id, B.id, C.id]));
    const a = await session(A, newSid());
    expect(await a.call("message_send", { to: sc, text: "back?" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
  }, 60_000);
});
