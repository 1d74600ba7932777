import { afterAll, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/index.js";
import { sharedInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Hand-over subscriptions on the wire (DR-0024): `topic_subscribe` with
// `hand_over` claims inbox messages without taking them; `topic_unsubscribe`
// with `handed_over` records them delivered, all or none; whatever is not
// confirmed is held again.

const shared = sharedInstance();
const peers: Peer[] = [];

afterAll(() => {
  for (const p of peers) p.close();
  expect(contractViolations).toEqual([]);
});

async function session(sid: string): Promise<Peer> {
  const p = await Peer.unix(shared.inst.socket);
  peers.push(p);
  await p.helloSession(sid, { cwd: "/tmp/hand-over" });
  return p;
}

async function claim(p: Peer, mode: "wait" | "take"): Promise<InboxMessage[]> {
  const snap = p.next((f) => f.ev === "topic" && f.topic === "inbox" && f.snapshot === true);
  await p.call("topic_subscribe", { topic: "inbox", hand_over: mode });
  return (await snap).data as InboxMessage[];
}

describe("hand-over subscriptions", () => {
  it("claims without taking: what is not confirmed is held again", async () => {
    const sid = newSid();
    const sender = await session(newSid());
    await (await session(sid)).close();
    for (const text of ["a", "b", "c"]) await sender.call("message_send", { to: sid, text });

    const first = await session(sid);
    const claimed = await claim(first, "take");
    expect(claimed.map((m) => m.text)).toEqual(["a", "b", "c"]);
    // Confirm only the first two; the third is released by the unsubscribe.
    const r = await first.call<{ handed_over: string[] }>("topic_unsubscribe", {
      topic: "inbox",
      handed_over: claimed.slice(0, 2).map((m) => m.mid),
    });
    expect(r.handed_over).toEqual(claimed.slice(0, 2).map((m) => m.mid));
    const second = await session(sid);
    expect((await claim(second, "take")).map((m) => m.text)).toEqual(["c"]);
  });

  it("a claim is nobody else's: a plain subscriber's snapshot leaves it out", async () => {
    const sid = newSid();
    const sender = await session(newSid());
    await (await session(sid)).close();
    await sender.call("message_send", { to: sid, text: "claimed" });
    const taker = await session(sid);
    expect((await claim(taker, "take")).map((m) => m.text)).toEqual(["claimed"]);
    const plain = await session(sid);
    expect((await plain.subscribe("inbox")).data).toEqual([]);
    // The claimer goes without confirming: the message comes back, and the
    // plain subscriber (the receiver) gets it.
    taker.close();
    const offered = await plain.next((f) => f.ev === "topic" && f.topic === "inbox");
    expect((offered.data as InboxMessage[]).map((m) => m.text)).toEqual(["claimed"]);
  });

  it("confirms all or none", async () => {
    const sid = newSid();
    const sender = await session(newSid());
    await (await session(sid)).close();
    await sender.call("message_send", { to: sid, text: "mine" });
    const p = await session(sid);
    const [m] = await claim(p, "take");
    const foreign = `${m!.mid.split("/")[0]}/999999`;
    const r = await p.call<{ handed_over: string[] }>("topic_unsubscribe", {
      topic: "inbox",
      handed_over: [m!.mid, foreign],
    });
    expect(r.handed_over).toEqual([]);
    expect((await claim(await session(sid), "take")).map((x) => x.text)).toEqual(["mine"]);
  });

  it("a waiter's sender hears delivered only once the waiter confirms", async () => {
    const sid = newSid();
    const sender = await session(newSid());
    const waiter = await session(sid);
    expect(await claim(waiter, "wait")).toEqual([]);
    const frame = waiter.next((f) => f.ev === "topic" && f.topic === "inbox");
    let settled = false;
    const reply = sender.call("message_send", { to: sid, text: "hi" }).finally(() => {
      settled = true;
    });
    const [m] = (await frame).data as InboxMessage[];
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    await waiter.call("topic_unsubscribe", { topic: "inbox", handed_over: [m!.mid] });
    expect(await reply).toEqual({ delivered: true });
  });

  it("refuses hand_over outside a session's inbox, keeping the connection", async () => {
    const p = await session(newSid());
    const r = await p.request("topic_subscribe", { topic: "peers", hand_over: "wait" });
    expect(r).toMatchObject({ ok: false, error: { code: "invalid_args" } });
    const u = await p.request("topic_unsubscribe", { topic: "peers", handed_over: [] });
    expect(u).toMatchObject({ ok: false, error: { code: "invalid_args" } });
    const person = await Peer.unix(shared.inst.socket);
    peers.push(person);
    await person.helloUser();
    const q = await person.request("topic_subscribe", { topic: "inbox", hand_over: "take" });
    expect(q).toMatchObject({ ok: false, error: { code: "invalid_args" } });
    expect((await p.call("instance_ping")).instance).toBe(shared.inst.id);
  });
});
