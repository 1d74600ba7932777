import { afterEach, describe, expect, it, vi } from "vitest";
import { INBOX_MAX_PER_SID, INBOX_RETENTION_MS } from "../../src/contract/index.js";
import { inboxRows } from "../helpers/db.js";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

type Msg = {
  mid: string;
  from: string;
  from_label: string;
  text: string;
  sent_at: number;
  reply_to?: string;
};

async function session(
  inst: TestInstance,
  sid: string,
  meta: Record<string, unknown> = {},
): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sid, meta);
  return p;
}

async function person(inst: TestInstance): Promise<Peer> {
  const p = await Peer.unix(inst.socket);
  await p.helloUser();
  return p;
}

function counterOf(mid: string): number {
  return Number(mid.split("/")[1]);
}

describe("message_send", () => {
  it("hands a message to a listening recipient at once: delivered, exactly once", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A, { repo: "widgets", ws: "board", cwd: "/src/widgets-board" });
    const b = await session(inst, B);
    await b.subscribe("inbox");
    const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await a.call("message_send", { to: B, text: "hi" })).toEqual({ delivered: true });
    const frame = await arrival;
    const [m] = frame.data as Msg[];
    expect(frame.instance).toBe(inst.id);
    expect(m).toMatchObject({ from: A, from_label: "widgets/board", text: "hi" });
    expect(m!.mid).toMatch(new RegExp(`^${inst.id}/\\d+$`));
    // Recorded delivered once the frame reached B's socket (DR-0050).
    await vi.waitFor(() =>
      expect(inboxRows(inst.stateDir).filter((r) => r.state === "held")).toEqual([]),
    );
    await inst.stop();
  });

  it("preparing while connected but not listening; the next inbox subscription receives it, once", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A);
    const b1 = await session(inst, B);
    const r = await a.call("message_send", { to: B, text: "hello B" });
    expect(r).toEqual({ delivered: false, reason: "preparing" });
    const snap = await b1.subscribe("inbox");
    expect((snap.data as Msg[]).map((m) => m.text)).toEqual(["hello B"]);
    expect((snap.data as Msg[])[0]).toMatchObject({ from: A, from_label: A });
    // Recorded delivered once the snapshot reached B's socket (DR-0050).
    await vi.waitFor(() =>
      expect(inboxRows(inst.stateDir).map((x) => x.state)).toEqual(["delivered"]),
    );
    // A second connection of B takes the inbox over; nothing is delivered twice.
    const b2 = await session(inst, B);
    const superseded = b1.next((f) => f.ev === "subscribe_superseded");
    expect((await b2.subscribe("inbox")).data).toEqual([]);
    expect(await superseded).toEqual({ ev: "subscribe_superseded" });
    await inst.stop();
  });

  it("paused: declared, then gone — held with candidates in the same repository", async () => {
    const inst = await startInstance();
    const [A, B, C] = [newSid(), newSid(), newSid()];
    const a = await session(inst, A, { repo_root: "/src/other", cwd: "/src/other" });
    const b = await session(inst, B, {
      repo_root: "/src/widgets",
      cwd: "/src/widgets-b",
      ws: "widgets-b",
    });
    await session(inst, C, { repo_root: "/src/widgets", cwd: "/src/widgets-c", ws: "widgets-c" });
    const watcher = await person(inst);
    await watcher.subscribe("peers");
    const { stopped_at } = await b.call<{ stopped_at: number }>("session_stopping", {
      reason: "prompt_input_exit",
    });
    b.close();
    const lost = await watcher.next((f) =>
      (f.data as { last_live: { sid: string }[] }).last_live.some((r) => r.sid === B),
    );
    const data = lost.data as { peers: { sid: string }[]; last_live: Record<string, unknown>[] };
    expect(data.peers.map((p) => p.sid)).not.toContain(B);
    expect(data.last_live.find((r) => r.sid === B)).toMatchObject({
      state: "paused",
      stopped_at,
      last_seen_at: expect.any(Number),
    });
    const r = await a.call("message_send", { to: B, text: "are you there?" });
    expect(r).toEqual({
      delivered: false,
      reason: "paused",
      candidates: [{ sid: C, ws: "widgets-c", instance: inst.id }],
    });
    // B resumes: it leaves last_live and receives the held message once.
    const back = await session(inst, B);
    expect(((await back.subscribe("inbox")).data as Msg[]).map((m) => m.text)).toEqual([
      "are you there?",
    ]);
    const row = await watcher.next(
      (f) => !(f.data as { last_live: { sid: string }[] }).last_live.some((x) => x.sid === B),
    );
    expect((row.data as { peers: { sid: string }[] }).peers.map((p) => p.sid)).toContain(B);
    await inst.stop();
  });

  it("disappeared without declaring; retention expires the row and the message together", async () => {
    const inst = await startInstance();
    const [A, B, C] = [newSid(), newSid(), newSid()];
    const a = await session(inst, A);
    const b = await session(inst, B, { repo_root: "/src/w", cwd: "/src/w1" });
    await session(inst, C, { repo_root: "/src/w", cwd: "/src/w2" });
    b.close();
    await b.closed();
    const watcher = await person(inst);
    const snap = await watcher.subscribe("peers");
    const row = (snap.data as { last_live: Record<string, unknown>[] }).last_live.find(
      (r) => r.sid === B,
    );
    expect(row).toMatchObject({ state: "disappeared" });
    expect(row).not.toHaveProperty("stopped_at");
    const r = await a.call("message_send", { to: B, text: "x" });
    expect(r).toEqual({
      delivered: false,
      reason: "disappeared",
      candidates: [{ sid: C, ws: "w2", instance: inst.id }],
    });
    const rowsBefore = inboxRows(inst.stateDir);
    const gone = watcher.next(
      (f) => !(f.data as { last_live: { sid: string }[] }).last_live.some((x) => x.sid === B),
    );
    await inst.advanceClock(INBOX_RETENTION_MS + 1);
    await gone;
    // Expiry itself writes nothing.
    expect(inboxRows(inst.stateDir)).toEqual(rowsBefore);
    const back = await session(inst, B);
    expect((await back.subscribe("inbox")).data).toEqual([]);
    await inst.stop();
    // After a restart the compacted inbox no longer holds the expired message.
    const later = { ...inst.env, CCMSG_TEST_CLOCK_OFFSET_MS: String(INBOX_RETENTION_MS + 1) };
    const again = await startInstance({ env: later, stateDir: inst.stateDir });
    expect(await again.compacted()).toBe(rowsBefore.length);
    expect(inboxRows(again.stateDir)).toEqual([]);
    await again.stop();
  });

  it("an unknown sid is session_not_found and nothing is stored", async () => {
    const inst = await startInstance();
    const a = await session(inst, newSid());
    const r = await a.request("message_send", { to: newSid(), text: "x" });
    expect(r.error?.code).toBe("session_not_found");
    expect(inboxRows(inst.stateDir)).toEqual([]);
    await inst.stop();
  });

  it("the 257th message to a silent recipient drops the oldest: inbox_full", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A);
    const b = await session(inst, B);
    const replies = await Promise.all(
      Array.from({ length: INBOX_MAX_PER_SID + 1 }, (_, i) =>
        a.call("message_send", { to: B, text: `m${i + 1}` }),
      ),
    );
    expect(replies.slice(0, INBOX_MAX_PER_SID).every((r) => r.reason === "preparing")).toBe(true);
    expect(replies.at(-1)).toEqual({ delivered: false, reason: "inbox_full" });
    const rows = inboxRows(inst.stateDir);
    expect(rows.filter((r) => r.state === "held")).toHaveLength(INBOX_MAX_PER_SID);
    expect(rows.find((r) => r.text === "m1")?.state).toBe("dropped");
    const texts = ((await b.subscribe("inbox")).data as Msg[]).map((m) => m.text);
    expect(texts).toEqual(Array.from({ length: INBOX_MAX_PER_SID }, (_, i) => `m${i + 2}`));
    await inst.stop();
  });

  it("a person's message comes from user; the session's answer reaches the person as notify", async () => {
    const inst = await startInstance();
    const B = newSid();
    const b = await session(inst, B, { title: "api refactor" });
    await b.subscribe("inbox");
    const p = await person(inst);
    await p.call("topic_subscribe", { topic: "notify" });
    const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
    expect(await p.call("message_send", { to: B, text: "please summarise" })).toEqual({
      delivered: true,
    });
    const [m] = (await arrival).data as Msg[];
    expect(m).toMatchObject({ from: "user", from_label: "user", text: "please summarise" });
    const peers = await p.subscribe("peers");
    const row = (peers.data as { peers: Record<string, unknown>[] }).peers.find((r) => r.sid === B);
    expect(row?.last_user_input_at).toEqual(expect.any(Number));
    await b.call("notify_send", { text: "done" });
    const note = await p.next((f) => f.topic === "notify");
    expect(note).toEqual({
      ev: "topic",
      topic: "notify",
      instance: inst.id,
      data: { sid: B, sid_label: "api refactor", text: "done", sent_at: expect.any(Number) },
    });
    await inst.stop();
  });

  it("a person subscribing to inbox consumes nothing", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A);
    const b = await session(inst, B);
    await a.call("message_send", { to: B, text: "one" });
    await a.call("message_send", { to: B, text: "two" });
    const p = await person(inst);
    expect((await p.subscribe("inbox")).data).toEqual([]);
    expect(inboxRows(inst.stateDir).every((r) => r.state === "held")).toBe(true);
    expect(((await b.subscribe("inbox")).data as Msg[]).map((m) => m.text)).toEqual(["one", "two"]);
    await inst.stop();
  });

  it("say_post tells watchers the session spoke", async () => {
    const inst = await startInstance();
    const A = newSid();
    const a = await session(inst, A, { title: "board" });
    const p = await person(inst);
    await p.call("topic_subscribe", { topic: "notify" });
    const { posted_at } = await a.call<{ posted_at: number }>("say_post", {
      text: "migration finished",
    });
    const note = await p.next((f) => f.topic === "notify");
    expect(note.data).toEqual({
      sid: A,
      sid_label: "board",
      text: "migration finished",
      sent_at: posted_at,
    });
    expect(await p.call("say_mark_read", { sid: A })).toEqual({});
    await inst.stop();
  });
});

describe("the inbox across restarts", () => {
  it("held messages survive a graceful restart in order, and mids keep increasing", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    const a = await session(inst, A, { repo: "r", ws: "a", cwd: "/r/a" });
    await session(inst, B);
    for (const t of ["1", "2", "3"]) await a.call("message_send", { to: B, text: t });
    a.close();
    await a.closed();
    await inst.stop();
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    const watcher = await person(again);
    const peers = await watcher.subscribe("peers");
    expect((peers.data as { last_live: { sid: string; repo: string }[] }).last_live).toEqual(
      expect.arrayContaining([expect.objectContaining({ sid: A, repo: "r" })]),
    );
    await session(again, B);
    const a2 = await session(again, A);
    await a2.call("message_send", { to: B, text: "4" });
    const b = await session(again, B);
    const msgs = (await b.subscribe("inbox")).data as Msg[];
    expect(msgs.map((m) => m.text)).toEqual(["1", "2", "3", "4"]);
    const counters = msgs.map((m) => counterOf(m.mid));
    expect([...counters].sort((x, y) => x - y)).toEqual(counters);
    expect(new Set(counters).size).toBe(4);
    await again.stop();
  });

  it("kill -9 during a burst loses none of the acknowledged sends", async () => {
    const inst = await startInstance();
    const A = newSid();
    const recipients = Array.from({ length: 8 }, () => newSid());
    const a = await session(inst, A);
    for (const r of recipients) await session(inst, r);
    const acked: string[] = [];
    let killed = false;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 1600; i++) {
      const text = `burst-${i}`;
      sends.push(
        a
          .call("message_send", { to: recipients[i % 8], text })
          .then(() => {
            acked.push(text);
            if (acked.length === 400 && !killed) {
              killed = true;
              inst.child.kill("SIGKILL");
            }
          })
          .catch(() => {}),
      );
    }
    await Promise.all(sends);
    await inst.exited;
    expect(acked.length).toBeGreaterThanOrEqual(400);
    const again = await startInstance({ env: inst.env, stateDir: inst.stateDir });
    const stored = new Set<string>();
    for (const r of recipients) {
      const b = await session(again, r);
      for (const m of (await b.subscribe("inbox")).data as Msg[]) stored.add(m.text);
    }
    expect(acked.filter((t) => !stored.has(t))).toEqual([]);
    await again.stop();
  });
});
