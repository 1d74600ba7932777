import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDirectDelivery } from "../../src/contract/index.js";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { inboxRows } from "../helpers/db.js";
import { requiredPath } from "../helpers/env.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Oldest first on every route (issue 25, DR-0053): held messages leave a
// session's inbox in mid order whichever routes take them — route (a) into
// the harness (a FakeHarness here), a waiter, the inbox hook's one-off take,
// a plain subscriber — and a newer one never goes by one route while an older
// one is on its way on another.

let inst: TestInstance;
let claudeHome: string;
const peers: Peer[] = [];
beforeAll(async () => {
  inst = await startInstance();
  claudeHome = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
});
afterAll(async () => {
  for (const p of peers) p.close();
  await inst.stop();
});
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function session(sid: string): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  peers.push(p);
  await p.helloSession(sid);
  return p;
}

/** Subscribe `p` to its inbox as a hand-over (`wait`, `take`) or plain
 * subscriber; resolves with the snapshot's texts. */
async function subscribe(p: Peer, mode?: "wait" | "take"): Promise<InboxMessage[]> {
  const snap = p.next((f) => f.topic === "inbox" && f.snapshot === true);
  await p.call(
    "topic_subscribe",
    mode === undefined ? { topic: "inbox" } : { topic: "inbox", hand_over: mode },
  );
  return (await snap).data as InboxMessage[];
}

const texts = (ms: InboxMessage[]) => ms.map((m) => m.text);
const framesOf = (h: FakeHarness) =>
  h.users.map((f) => parseDirectDelivery(f.message.content)?.text);
const rowsOf = (sid: string) => inboxRows(inst.stateDir).filter((r) => r.sid === sid);

async function hold(from: Peer, to: string, list: string[]): Promise<void> {
  for (const text of list)
    expect(await from.call("message_send", { to, text })).toMatchObject({ delivered: false });
}

describe("held messages leave oldest first, whichever routes take them", () => {
  it("a one-off take while route (a) hands held messages over gets nothing newer; route (a) hands them all over in order", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    (await session(B)).close();
    await hold(a, B, ["m1", "m2", "m3", "m4", "m5"]);
    // The harness appears and the session greets: route (a) offers what is
    // held, one at a time (250 ms each).
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    await session(B);
    await harness.taken(1);
    // The inbox hook's take (UserPromptSubmit) lands while m1 is in the
    // harness's hands: it must not take m2… past it.
    const hook = await session(B);
    expect(texts(await subscribe(hook, "take"))).toEqual([]);
    await harness.taken(5);
    expect(framesOf(harness)).toEqual(["m1", "m2", "m3", "m4", "m5"]);
    await harness.stop();
  });

  it("a take while route (a) hands a new message over gets nothing of what was held meanwhile", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    await session(B);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const first = a.call("message_send", { to: B, text: "n1" });
    await harness.taken(1);
    // Sent while n1 is in the harness's hands: held behind it.
    for (const text of ["n2", "n3", "n4"])
      expect(await a.call("message_send", { to: B, text })).toEqual({
        delivered: false,
        reason: "throttled",
      });
    const hook = await session(B);
    expect(texts(await subscribe(hook, "take"))).toEqual([]);
    expect(await first).toEqual({ delivered: true });
    await harness.taken(4);
    expect(framesOf(harness)).toEqual(["n1", "n2", "n3", "n4"]);
    await harness.stop();
  });

  it("a waiter never takes a message past one the inbox hook has claimed; it gets it once that one is passed on", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    (await session(B)).close();
    await hold(a, B, ["older"]);
    const hook = await session(B);
    const [older] = await subscribe(hook, "take");
    expect(older?.text).toBe("older");
    await hold(a, B, ["newer"]);
    const waiter = await session(B);
    expect(texts(await subscribe(waiter, "wait"))).toEqual([]);
    const offered = waiter.next((f) => f.topic === "inbox" && !f.snapshot);
    const done = await hook.call<{ handed_over: string[] }>("topic_unsubscribe", {
      topic: "inbox",
      handed_over: [older!.mid],
    });
    expect(done.handed_over).toEqual([older!.mid]);
    expect(texts((await offered).data as InboxMessage[])).toEqual(["newer"]);
  });

  it("a plain subscriber gets neither a held message nor a new one past one a hook has claimed, and both in order after it", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    (await session(B)).close();
    await hold(a, B, ["older"]);
    const hook = await session(B);
    const [older] = await subscribe(hook, "take");
    await hold(a, B, ["held"]);
    const plain = await session(B);
    expect(texts(await subscribe(plain))).toEqual([]);
    const arrivals: string[] = [];
    const two = new Promise<void>((resolve) => {
      const take = () =>
        void plain
          .next((f) => f.topic === "inbox" && !f.snapshot)
          .then((f) => {
            arrivals.push(...texts(f.data as InboxMessage[]));
            if (arrivals.length < 2) take();
            else resolve();
          });
      take();
    });
    // A new message while the older one is still claimed: it follows.
    const reply = a.call("message_send", { to: B, text: "new" });
    await hook.call("topic_unsubscribe", { topic: "inbox", handed_over: [older!.mid] });
    await two;
    expect(arrivals).toEqual(["held", "new"]);
    expect(await reply).toEqual({ delivered: true });
    // All three recorded delivered, each once.
    const deadline = Date.now() + 5000;
    while (!rowsOf(B).every((r) => r.state === "delivered") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(rowsOf(B).map((r) => [r.text, r.state])).toEqual([
      ["older", "delivered"],
      ["held", "delivered"],
      ["new", "delivered"],
    ]);
  });
});
