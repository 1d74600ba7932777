import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDirectDelivery, renderDirectDelivery } from "../../src/contract/index.js";
import { inboxRows } from "../helpers/db.js";
import { requiredPath } from "../helpers/env.js";
import { type Answer, FakeHarness } from "../helpers/fake-harness.js";
import { isolatedHome, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Route (a) of message delivery (issue 9, item 4; contract §7.7 step 3,
// harness.md §5.2): straight into a Claude Code session's messaging socket,
// spoken to by a FakeHarness in the socket's own wire format.

let inst: TestInstance;
let claudeHome: string;
beforeAll(async () => {
  inst = await startInstance();
  claudeHome = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
});
afterAll(async () => {
  await inst.stop();
});
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function session(sid: string, meta: Record<string, unknown> = {}): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid, meta);
  return p;
}

type Msg = { mid: string; text: string };
const rowsOf = (sid: string) => inboxRows(inst.stateDir).filter((r) => r.sid === sid);

describe("route (a): into the harness messaging socket", () => {
  it("what was held while a session was gone reaches its harness once it is live again", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    (await session(B)).close();
    const held = await a.call<{ delivered: boolean }>("message_send", {
      to: B,
      text: "while away",
    });
    expect(held.delivered).toBe(false);
    // Its harness comes back and the session greets: the held message goes
    // straight in, without a subscription or a new send.
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const b = await session(B);
    const [frame] = await harness.taken(1);
    expect(parseDirectDelivery(frame!.message.content)?.text).toBe("while away");
    // Recorded once the refusal window passed in silence (allow a loaded
    // machine 10 s: it flaked at 2 s with other suites running).
    for (let i = 0; i < 500 && rowsOf(B)[0]?.state !== "delivered"; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(rowsOf(B).map((r) => r.state)).toEqual(["delivered"]);
    b.close();
    await harness.stop();
  });

  it("delivers with the auth line and the contract's exact rendering; nothing reaches the inbox topic", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A, { repo: "widgets", ws: "board" });
    const b = await session(B);
    await b.subscribe("inbox");
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });

    const first = await a.call<{ delivered: boolean }>("message_send", {
      to: B,
      text: 'build is <green> & "done"\n\nsecond paragraph',
    });
    expect(first).toEqual({ delivered: true });
    const [frame] = await harness.taken(1);
    expect(harness.auths).toEqual([{ type: "auth", token: harness.token }]);
    expect(frame!.type).toBe("user");
    expect(frame!.session_id).toBe(B);
    expect(frame!.msg_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The reply address is a socket of ours beside the harness's own.
    expect(frame!.from).toMatch(
      new RegExp(`^uds:${dirname(harness.socketPath)}/${inst.pid}-[0-9a-f]{8}\\.sock$`),
    );
    const d = parseDirectDelivery(frame!.message.content);
    expect(d).toEqual({
      mid: expect.stringMatching(new RegExp(`^${inst.id}/\\d+$`)),
      from: A,
      from_label: "widgets/board",
      text: 'build is <green> & "done"\n\nsecond paragraph',
    });
    expect(renderDirectDelivery(d!)).toBe(frame!.message.content);
    expect(frame!.message.content).toContain(`Reply with: ccmsg reply ${d!.mid} --to ${A} <text>`);

    // A reply carries ccmsg-reply-to.
    await a.call("message_send", { to: B, text: "and one more", reply_to: d!.mid });
    const [, second] = await harness.taken(2);
    expect(parseDirectDelivery(second!.message.content)).toMatchObject({
      reply_to: d!.mid,
      text: "and one more",
    });
    // Both recorded as delivered; the status sockets are gone.
    expect(rowsOf(B).map((r) => r.state)).toEqual(["delivered", "delivered"]);
    expect(readdirSync(dirname(harness.socketPath))).toEqual([`${harness.pid}.sock`]);

    // Exactly once: the inbox subscriber saw neither. Once the harness is
    // gone, the next message takes route (b) and is the first it sees.
    await harness.stop();
    const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await a.call("message_send", { to: B, text: "via the topic" })).toEqual({
      delivered: true,
    });
    expect(((await arrival).data as Msg[]).map((m) => m.text)).toEqual(["via the topic"]);
    a.close();
    b.close();
  });

  it("a new message follows what was held through the harness, oldest first (the harness appearing is seen at once)", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    for (const text of ["h1", "h2", "h3"])
      expect(await a.call("message_send", { to: B, text })).toEqual({
        delivered: false,
        reason: "preparing",
      });
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    // Never past the older ones (issue 25, DR-0053): held behind them and
    // handed over in its turn.
    expect(await a.call("message_send", { to: B, text: "new" })).toEqual({
      delivered: false,
      reason: "throttled",
    });
    const frames = await harness.taken(4);
    expect(frames.map((f) => parseDirectDelivery(f.message.content)?.text)).toEqual([
      "h1",
      "h2",
      "h3",
      "new",
    ]);
    await until(() => rowsOf(B).every((r) => r.state === "delivered"));
    // Nothing is left for a subscription.
    expect((await b.subscribe("inbox")).data).toEqual([]);
    await harness.stop();
    a.close();
    b.close();
  });

  const refusals: [string, Answer][] = [
    ["refused", { kind: "receipt", status: "expired" }],
    ["denied", { kind: "receipt", status: "denied" }],
    [
      "dropped (named among dropped_msg_ids)",
      { kind: "receipt", status: "dropped", dropped: true },
    ],
    ["refused (the spec's bare frame)", { kind: "receipt", status: "refused", action: "bare" }],
  ];
  it.each(refusals)(
    "a receipt (%s) holds the message as throttled; the next send offers it first",
    async (_name, refusal) => {
      const [A, B] = [newSid(), newSid()];
      const a = await session(A);
      const b = await session(B);
      const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
      harness.answers = [refusal, { kind: "accept" }];
      expect(await a.call("message_send", { to: B, text: "first" })).toEqual({
        delivered: false,
        reason: "throttled",
      });
      expect(rowsOf(B).map((r) => [r.text, r.state])).toEqual([["first", "held"]]);
      expect(harness.users).toEqual([]);
      // No timer offers it again; the next event does: a send to the sid,
      // which follows it (issue 25: never past an older one).
      expect(await a.call("message_send", { to: B, text: "second" })).toEqual({
        delivered: false,
        reason: "throttled",
      });
      const frames = await harness.taken(2);
      expect(frames.map((f) => parseDirectDelivery(f.message.content)?.text)).toEqual([
        "first",
        "second",
      ]);
      await until(() => rowsOf(B).every((r) => r.state === "delivered"));
      await harness.stop();
      a.close();
      b.close();
    },
  );

  it("a message the harness parks for its person (held) is handed over: delivered, never offered again", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    harness.answers = [{ kind: "receipt", status: "held" }, { kind: "accept" }];
    expect(await a.call("message_send", { to: B, text: "parked" })).toEqual({ delivered: true });
    // The harness hands it over once its person releases it: ccmsg keeps no
    // copy, so neither the next delivery nor a subscription repeats it.
    expect(rowsOf(B).map((r) => [r.text, r.state])).toEqual([["parked", "delivered"]]);
    expect(await a.call("message_send", { to: B, text: "next" })).toEqual({ delivered: true });
    await harness.taken(1);
    expect((await b.subscribe("inbox")).data).toEqual([]);
    expect(harness.users.map((f) => parseDirectDelivery(f.message.content)?.text)).toEqual([
      "next",
    ]);
    await harness.stop();
    a.close();
    b.close();
  });

  it("a refused message is also handed over by the session's next inbox subscription", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    harness.answers = [{ kind: "receipt", status: "expired" }];
    expect(await a.call("message_send", { to: B, text: "later" })).toMatchObject({
      reason: "throttled",
    });
    const snap = await b.subscribe("inbox");
    expect((snap.data as Msg[]).map((m) => m.text)).toEqual(["later"]);
    // Recorded delivered once the snapshot reached B's socket (DR-0050).
    await until(() => rowsOf(B).every((r) => r.state === "delivered"));
    await harness.stop();
    a.close();
    b.close();
  });

  const unavailable: [string, Partial<Parameters<typeof FakeHarness.start>[0]>, string?][] = [
    ["no listener at the socket", { noListener: true }],
    ["a peerProtocol other than 1", { peerProtocol: 2 }],
    ["no messagingSocketPath", { noSocketPath: true }],
    ["no key file", { token: null }],
    ["an empty token", { token: "" }],
    ["a state file of another session", { sid: "other" }],
    ["a token the harness does not take", {}, "wrong token"],
    ["the harness process is gone", {}, "dead"],
  ];
  it.each(unavailable)(
    "unavailable (%s): the inbox subscriber gets it, or it is held as preparing",
    async (_name, options, twist) => {
      const [A, B] = [newSid(), newSid()];
      const a = await session(A);
      const b = await session(B);
      const sid = options.sid === "other" ? newSid() : B;
      const harness = await FakeHarness.start({ configHome: claudeHome, ...options, sid });
      if (twist === "wrong token") {
        const key = readdirSync(join(claudeHome, "sessions")).find(
          (n) => n.startsWith(`${harness.pid}.`) && n.endsWith(".key"),
        );
        writeFileSync(
          join(claudeHome, "sessions", key!),
          JSON.stringify({ peerToken: "0".repeat(32) }),
        );
      }
      if (twist === "dead") await harness.stop();
      // Without a subscriber: held with the classification's reason.
      expect(await a.call("message_send", { to: B, text: "held" })).toEqual({
        delivered: false,
        reason: "preparing",
      });
      // With one: route (b) delivers it (the snapshot takes the held one).
      const snap = await b.subscribe("inbox");
      expect((snap.data as Msg[]).map((m) => m.text)).toEqual(["held"]);
      const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
      expect(await a.call("message_send", { to: B, text: "topic" })).toEqual({ delivered: true });
      expect(((await arrival).data as Msg[]).map((m) => m.text)).toEqual(["topic"]);
      expect(harness.users).toEqual([]);
      await harness.stop();
      a.close();
      b.close();
    },
  );

  it("unavailable when connect and flush exceed their budget (a harness that stopped reading)", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    await b.subscribe("inbox");
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B, stall: true });
    // Far more than a Unix socket buffers: the frame cannot be flushed.
    const text = "\u0001".repeat(131_072);
    const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await a.call("message_send", { to: B, text })).toEqual({ delivered: true });
    expect(((await arrival).data as Msg[])[0]!.text).toBe(text);
    expect(harness.users).toEqual([]);
    await harness.stop();
    a.close();
    b.close();
  });

  it("with a waiter holding a claim, route (a) waits for it: a newer message follows once the claim is passed on", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    expect(await a.call("message_send", { to: B, text: "claimed" })).toMatchObject({
      reason: "preparing",
    });
    // A waiter (hand-over subscription) claims what is held, not yet passed on.
    const waiter = await session(B);
    const snap = waiter.next((f) => f.topic === "inbox" && f.snapshot === true);
    await waiter.call("topic_subscribe", { topic: "inbox", hand_over: "wait" });
    const [claimed] = (await snap).data as Msg[];
    expect(claimed!.text).toBe("claimed");

    // Issue 25 (DR-0053): the harness is there, but "direct" must not pass
    // the older message the waiter holds. It is held, and the waiter — the
    // session's receiver — is offered it after its claim.
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const offered = waiter.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await a.call("message_send", { to: B, text: "direct" })).toEqual({
      delivered: false,
      reason: "throttled",
    });
    expect(((await offered).data as Msg[]).map((m) => m.text)).toEqual(["direct"]);
    expect(harness.users).toEqual([]);
    // The waiter passes on only the older one; the newer one, released,
    // goes through the harness after it.
    const done = await waiter.call<{ handed_over: string[] }>("topic_unsubscribe", {
      topic: "inbox",
      handed_over: [claimed!.mid],
    });
    expect(done.handed_over).toEqual([claimed!.mid]);
    await harness.taken(1);
    await until(() => rowsOf(B).every((r) => r.state === "delivered"));
    expect(await a.call("message_send", { to: B, text: "last" })).toEqual({ delivered: true });
    await harness.taken(2);
    expect(harness.users.map((f) => parseDirectDelivery(f.message.content)?.text)).toEqual([
      "direct",
      "last",
    ]);
    expect(rowsOf(B).map((r) => [r.text, r.state])).toEqual([
      ["claimed", "delivered"],
      ["direct", "delivered"],
      ["last", "delivered"],
    ]);
    await harness.stop();
    a.close();
    b.close();
    waiter.close();
  });

  it("a message sent while one is being handed over waits its turn (throttled), then follows it", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await session(A);
    const b = await session(B);
    const harness = await FakeHarness.start({ configHome: claudeHome, sid: B });
    const replies = await Promise.all(
      ["one", "two", "three"].map((text) => a.call("message_send", { to: B, text })),
    );
    expect(replies).toEqual([
      { delivered: true },
      { delivered: false, reason: "throttled" },
      { delivered: false, reason: "throttled" },
    ]);
    const frames = await harness.taken(3);
    expect(frames.map((f) => parseDirectDelivery(f.message.content)?.text)).toEqual([
      "one",
      "two",
      "three",
    ]);
    await until(() => rowsOf(B).every((r) => r.state === "delivered"));
    await harness.stop();
    a.close();
    b.close();
  });
});

describe("route (a) switched off", () => {
  it("direct_delivery: false in ccmsg's config leaves the harness socket alone", async () => {
    const { env } = isolatedHome();
    mkdirSync(join(env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ direct_delivery: false }),
    );
    const off = await startInstance({ env });
    const [A, B] = [newSid(), newSid()];
    const a = await Peer.unix(off.socket);
    await a.helloSession(A);
    const b = await Peer.unix(off.socket);
    await b.helloSession(B);
    const harness = await FakeHarness.start({ configHome: env.CLAUDE_CONFIG_DIR!, sid: B });
    expect(await a.call("message_send", { to: B, text: "x" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
    expect(harness.auths).toEqual([]);
    await harness.stop();
    a.close();
    b.close();
    await off.stop();
  });
});

/** Poll a condition with a deadline (the store settles right after a reply). */
async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
