import { afterEach, describe, expect, it } from "vitest";
import { EGRESS_MAX_WAITING, META_PATH_MAX_CHARS } from "../../src/contract/index.js";
import { VALUE_TOPIC_PACE } from "../../src/instance/topic-hub.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function session(inst: TestInstance, sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid);
  return p;
}

async function person(inst: TestInstance, ws = false): Promise<Peer> {
  const p = ws ? await Peer.ws(`${inst.http}ws`) : await Peer.unix(inst.socket);
  await p.helloUser();
  return p;
}

type PeersData = { peers: { sid: string; last_activity_at?: number }[]; last_live: unknown[] };

describe("value topics are paced", () => {
  it("a value changing ~1,000 times a second reaches a subscriber at most ~10 times a second, ending on the final value", async () => {
    const inst = await startInstance();
    const watcher = await person(inst, true);
    await watcher.subscribe("peers");
    const driver = await session(inst, newSid());
    const t0 = Date.now();
    const before = watcher.frames.length;
    let requests = 0;
    // At least 2 s and more than 1,000 changes, however loaded the machine:
    // the pace is judged against the time it took.
    while (Date.now() - t0 < 2000 || requests <= 1000) {
      await driver.call("instance_ping");
      requests++;
    }
    const elapsed = Date.now() - t0;
    expect(requests).toBeGreaterThan(1000);
    // The final value: what a new subscriber is told now.
    const fresh = await person(inst);
    const final = (await fresh.subscribe("peers")).data as PeersData;
    await watcher.next(
      (f) => f.topic === "peers" && JSON.stringify(f.data) === JSON.stringify(final),
    );
    const received = watcher.frames.slice(before).filter((f) => f.topic === "peers").length;
    expect(received).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 3);
    expect(received).toBeGreaterThan(5);
    await inst.stop();
  });

  it("sessions coming and going under a long last_live: a watcher gets no more than the value's byte budget, ending on the final value", async () => {
    const inst = await startInstance();
    const watcher = await person(inst);
    let bytes = 0;
    let counting = false;
    watcher.client.onLine((line, parsed) => {
      if (counting && (parsed as { topic?: string }).topic === "peers")
        bytes += Buffer.byteLength(line) + 1;
    });
    await watcher.subscribe("peers");
    // Rows of ~50 KB (paths at their longest, each character written as six
    // bytes): six lost sessions hold ~300 KB of last_live.
    const path = `/${"\u0001".repeat(META_PATH_MAX_CHARS - 1)}`;
    const sids = Array.from({ length: 6 }, () => newSid());
    const visit = async (sid: string) => {
      const p = await Peer.unix(inst.socket);
      await p.helloSession(sid, { cwd: path, repo_root: path, repo: "r", ws: sid.slice(0, 8) });
      p.close();
      await p.closed();
    };
    const allLost = (f: { data?: unknown }) => {
      const d = f.data as PeersData;
      return d.peers.length === 0 && d.last_live.length === sids.length;
    };
    for (const sid of sids) await visit(sid);
    await watcher.next((f) => f.topic === "peers" && allLost(f), 30_000);
    counting = true;
    const t0 = Date.now();
    let visits = 0;
    while (Date.now() - t0 < 5000) await visit(sids[visits++ % sids.length]!);
    // The final value: what a new subscriber holds once every session is lost.
    const fresh = await person(inst);
    const snapshot = await fresh.subscribe("peers");
    const final = allLost(snapshot) ? snapshot : await fresh.next(allLost, 30_000);
    const same = JSON.stringify(final.data);
    await watcher.next((f) => f.topic === "peers" && JSON.stringify(f.data) === same, 30_000);
    const seconds = (Date.now() - t0) / 1000;
    expect(visits).toBeGreaterThan(sids.length);
    // Ten frames a second of ~300 KB would be ~3 MB a second.
    const { burstBytes, bytesPerSecond } = VALUE_TOPIC_PACE;
    expect(bytes).toBeLessThanOrEqual(burstBytes + bytesPerSecond * seconds + 64 * 1024);
    await inst.stop();
  });
});

describe("a slow subscriber under a flood", () => {
  it("inbox: a receiver that stops reading has the sends beyond what may wait throttled and held; once it reads again every message arrives exactly once", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A);
    const b = await session(inst, B);
    await b.subscribe("inbox");
    b.client.pauseReading();
    const body = "x".repeat(8 * 1024);
    const replies = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        a.call("message_send", { to: B, text: `${i}:${body}` }),
      ),
    );
    const delivered = replies.filter((r) => r.delivered === true).length;
    const throttled = replies.filter((r) => r.reason === "throttled").length;
    expect(delivered + throttled).toBe(400);
    expect(throttled).toBeGreaterThan(0);
    expect(delivered).toBeGreaterThanOrEqual(EGRESS_MAX_WAITING);
    b.client.resumeReading();
    // Reading again, it is offered what was held for it: no resubscribe.
    const numbers = () =>
      b.frames
        .filter((f) => f.topic === "inbox")
        .flatMap((f) => f.data as { text: string }[])
        .map((m) => Number(m.text.split(":")[0]));
    while (numbers().length < 400) await b.next((f) => f.topic === "inbox");
    expect([...numbers()].sort((x, y) => x - y)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    const snap = await b.subscribe("inbox");
    expect(snap.data).toEqual([]);
    await inst.stop();
  });

  it("notify: every send succeeds; what arrives is in order without duplicates; refusals are counted in the log", async () => {
    const inst = await startInstance();
    const s = await session(inst, newSid());
    const p = await person(inst);
    await p.call("topic_subscribe", { topic: "notify" });
    p.client.pauseReading();
    const body = "y".repeat(8 * 1024);
    for (let i = 0; i < 300; i++)
      expect(await s.call("notify_send", { text: `${i}:${body}` })).toEqual({});
    p.client.resumeReading();
    await p.call("instance_ping");
    const seq = p.frames
      .filter((f) => f.topic === "notify")
      .map((f) => Number((f.data as { text: string }).text.split(":")[0]));
    expect(seq.length).toBeGreaterThan(0);
    expect(seq).toEqual([...seq].sort((x, y) => x - y));
    expect(new Set(seq).size).toBe(seq.length);
    if (seq.length < 300) {
      await inst.stop();
      expect(
        inst
          .log()
          .some(
            (l) => l.msg === "frame refused: subscriber is not keeping up" && l.topic === "notify",
          ),
      ).toBe(true);
    } else {
      await inst.stop();
    }
  });
});

describe("kv topics", () => {
  it("snapshot, then changed entries; a removal is a tombstone; an older write loses", async () => {
    const inst = await startInstance();
    const p = await person(inst);
    await p.call("kv_write", { ns: "webui", key: "theme", value: { mode: "dark" } });
    const snap = await p.subscribe("kv:webui");
    expect(snap.data).toEqual({
      entries: [{ key: "theme", value: { mode: "dark" }, updated_at: expect.any(Number) }],
    });
    await p.call("kv_write", { ns: "webui", key: "layout", value: [1, 2], updated_at: 5000 });
    expect((await p.next((f) => f.topic === "kv:webui" && !f.snapshot)).data).toEqual({
      entries: [{ key: "layout", value: [1, 2], updated_at: 5000 }],
    });
    const older = await p.call("kv_write", {
      ns: "webui",
      key: "layout",
      value: "stale",
      updated_at: 4000,
    });
    expect(older).toEqual({ updated_at: 5000 });
    expect(await p.call("kv_read", { ns: "webui", key: "layout" })).toEqual({
      value: [1, 2],
      updated_at: 5000,
    });
    await p.call("kv_delete", { ns: "webui", key: "theme" });
    expect((await p.next((f) => f.topic === "kv:webui" && !f.snapshot)).data).toEqual({
      entries: [{ key: "theme", updated_at: expect.any(Number), deleted: true }],
    });
    expect((await p.request("kv_read", { ns: "webui", key: "theme" })).error?.code).toBe(
      "not_found",
    );
    expect(await p.call("kv_delete", { ns: "webui", key: "never" })).toEqual({});
    await inst.stop();
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    const q = await person(again);
    expect(await q.call("kv_read", { ns: "webui", key: "layout" })).toEqual({
      value: [1, 2],
      updated_at: 5000,
    });
    await again.stop();
  });

  it("refuses bad namespaces and keys, and sessions", async () => {
    const inst = await startInstance();
    const p = await person(inst);
    for (const args of [
      { ns: "Bad", key: "k", value: 1 },
      { ns: "ok", key: "", value: 1 },
      { ns: "ok", key: "a\nb", value: 1 },
      { ns: "ok", key: "k".repeat(257), value: 1 },
      { ns: "ok", key: "k" },
    ]) {
      expect(
        (await p.request("kv_write", args)).error?.code,
        JSON.stringify(args).slice(0, 80),
      ).toBe("invalid_args");
    }
    const s = await session(inst, newSid());
    expect((await s.request("kv_read", { ns: "ok", key: "k" })).error?.code).toBe("forbidden");
    await inst.stop();
  });
});

describe("session_status", () => {
  it("answers a snapshot of the fields this build knows, the rest empty", async () => {
    const inst = await startInstance();
    const sid = newSid();
    const p = await person(inst);
    const snap = await p.subscribe(`session_status:${sid}`);
    expect(snap.data).toEqual({
      sid,
      todos: [],
      workflows: [],
      background: [],
      teammates: [],
      agent_tree: { teammates: [], agents: [], workflows: [] },
      external_files: [],
      workspace_folders: [],
    });
    await inst.stop();
  });
});
