import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { INBOX_MAX_PER_SID } from "../../src/contract/constants.js";
import { http } from "../helpers/http.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { holdLock } from "../helpers/lock.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 8, items 1–5: bursts, another process's write lock and a full disk.
// What a sender is told must be true, and nothing a reader reads is lost.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function session(inst: TestInstance, sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid);
  return p;
}

function inboxTexts(p: Peer): string[] {
  return p.frames
    .filter((f) => f.topic === "inbox")
    .flatMap((f) => f.data as { text: string }[])
    .map((m) => m.text);
}

/** A session that was connected once and is gone (its messages are held). */
async function lostSession(inst: TestInstance): Promise<string> {
  const sid = newSid();
  const p = await session(inst, sid);
  p.close();
  await p.closed();
  return sid;
}

describe("a burst to a reader that keeps up", () => {
  it("20,000 sends all in flight at once: every one delivered, once, in order", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const b = await session(inst, B);
    await b.subscribe("inbox");
    const a = await session(inst, A);
    const n = 20_000;
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => a.request("message_send", { to: B, text: `${i}` })),
    );
    const notDelivered = replies.filter((r) => r.delivered !== true);
    expect(notDelivered.length, JSON.stringify(notDelivered[0])).toBe(0);
    await b.next((f) => f.topic === "inbox" && JSON.stringify(f.data).includes(`"${n - 1}"`));
    expect(inboxTexts(b)).toEqual(Array.from({ length: n }, (_, i) => `${i}`));
    await inst.stop();
  });
});

describe("another process holds the database's write lock", () => {
  it("a live recipient still gets its message and the sender hears delivered; a message that cannot be stored is refused, kept nowhere, and the inbox count stays exact", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const C = await lostSession(inst);
    const b = await session(inst, B);
    await b.subscribe("inbox");
    const a = await session(inst, A);

    const lock = await holdLock(join(inst.stateDir, "ccmsg.db"));
    const toLost = Array.from({ length: 10 }, (_, i) =>
      a.request("message_send", { to: C, text: `locked ${i}` }),
    );
    const toLive = a.request("message_send", { to: B, text: "through the lock" });
    // Nothing on a connected path waits on the lock: pings go on at full
    // speed meanwhile (SQLite's busy wait would allow a few dozen a second).
    let pings = 0;
    const until = performance.now() + 1000;
    while (performance.now() < until) {
      await a.call("instance_ping", {});
      pings++;
    }
    expect(pings).toBeGreaterThan(300);
    const live = await toLive;
    expect(live.ok && live.delivered, JSON.stringify(live)).toBe(true);
    expect(inboxTexts(b)).toEqual(["through the lock"]);
    // The lock outlasts the store's 5 s wait: those sends were not stored.
    for (const r of await Promise.all(toLost)) {
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe("internal_error");
      expect(r.error?.msg).toMatch(/^not sent, retry: /);
    }
    await lock.release();

    // Exactly INBOX_MAX_PER_SID fit before the first drop: the refused ten
    // never counted.
    const reasons: unknown[] = [];
    for (let i = 0; i <= INBOX_MAX_PER_SID; i++) {
      const r = await a.call<{ reason: string }>("message_send", { to: C, text: `after ${i}` });
      reasons.push(r.reason);
    }
    expect(reasons.slice(0, INBOX_MAX_PER_SID).every((r) => r === "disappeared")).toBe(true);
    expect(reasons.at(-1)).toBe("inbox_full");
    const c = await session(inst, C);
    const snap = await c.subscribe("inbox");
    const texts = (snap.data as { text: string }[]).map((m) => m.text);
    expect(texts).toHaveLength(INBOX_MAX_PER_SID);
    expect(texts[0]).toBe("after 1");
    expect(texts.some((t) => t.startsWith("locked"))).toBe(false);
    await inst.stop();
  }, 20_000);

  it("a recipient subscribing during the lock gets what was held once the lock goes", async () => {
    const inst = await startInstance();
    const A = newSid();
    const C = await lostSession(inst);
    const a = await session(inst, A);
    await a.call("message_send", { to: C, text: "held before" });
    const lock = await holdLock(join(inst.stateDir, "ccmsg.db"));
    const c = await session(inst, C);
    const snap = await c.subscribe("inbox");
    expect(snap.data).toEqual([]);
    await lock.release();
    const frame = await c.next((f) => f.topic === "inbox" && !f.snapshot);
    expect((frame.data as { text: string }[])[0]?.text).toBe("held before");
    await inst.stop();
  });
});

describe("a full disk", () => {
  it("writers get a clear error; pings, reads, topics and delivery to live subscribers go on; it recovers when space returns", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const C = await lostSession(inst);
    const b = await session(inst, B);
    await b.subscribe("inbox");
    const a = await session(inst, A);
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    await person.call("kv_write", { ns: "n", key: "k", value: "before" });

    await http(inst.http, "POST", "/_test/disk-full", { full: true });
    // Fill what room the file has left, then every write is refused.
    let refused: { code?: string; msg?: string } | undefined;
    for (let i = 0; i < 5000 && refused === undefined; i++) {
      const r = await a.request("message_send", { to: C, text: `${i}:${"x".repeat(4000)}` });
      if (!r.ok) refused = r.error;
    }
    expect(refused?.code).toBe("internal_error");
    expect(refused?.msg).toMatch(/^not sent, retry: .*disk .* is full/);
    const kv = await person.request("kv_write", { ns: "n", key: "k2", value: "y".repeat(60_000) });
    expect(kv.error?.msg).toMatch(/disk .* is full/);

    expect(await a.call("instance_ping", {})).toBeDefined();
    expect((await person.call<{ value: unknown }>("kv_read", { ns: "n", key: "k" })).value).toBe(
      "before",
    );
    const live = await a.request("message_send", { to: B, text: "to a live reader" });
    expect(live.ok && live.delivered).toBe(true);
    expect(inboxTexts(b)).toContain("to a live reader");
    const watcher = await session(inst, newSid());
    expect((await watcher.subscribe("peers")).data).toBeDefined();

    await http(inst.http, "POST", "/_test/disk-full", { full: false });
    const after = await a.call<{ reason: string }>("message_send", { to: C, text: "space back" });
    expect(after.reason).toBe("disappeared");
    await person.call("kv_write", { ns: "n", key: "k", value: "after" });
    expect(await inst.stop()).toBe(0);
  }, 30_000);
});
