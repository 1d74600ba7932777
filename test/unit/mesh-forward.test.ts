import { afterEach, describe, expect, it, vi } from "vitest";
import type { Identity } from "../../src/contract/envelope.js";
import { contractError } from "../../src/contract/errors.js";
import { Dispatcher, type Handlers } from "../../src/instance/dispatch.js";
import { Forwarder, SUBJECT_SID_OPS } from "../../src/instance/mesh/forward.js";
import { OwnerIndex } from "../../src/instance/mesh/owners.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { silentLogger } from "../../src/util/logger.js";
import { FakeMesh } from "../helpers/fake-mesh.js";
import { memoryTransport } from "../helpers/memory-transport.js";

const A = "a".repeat(32);
const B = "b".repeat(32);
const C = "c".repeat(32);
const ON_A = "0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a";
const ON_C = "0c0c0c0c-0c0c-4c0c-8c0c-0c0c0c0c0c0c";
const NOWHERE = "0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f";
const silent = silentLogger;

function peersOf(instance: string, live: string[], lost: string[] = []) {
  const row = (sid: string) => ({ sid, instance, repo: "r", ws: "w", cwd: "/r" });
  return {
    peers: live.map((sid) => ({ ...row(sid), protocol_version: 3 })),
    last_live: lost.map((sid) => ({ ...row(sid), last_seen_at: 1 })),
  };
}

/** A dispatcher of `instanceId` with no capabilities, no admin frames, no log. */
function quiet(instanceId: string) {
  const capabilities = new Set<never>();
  return { instanceId, admin: {}, capabilities, log: silent, onRequest: () => {} };
}

/** Instance A forwarding to C (and B), whose dispatcher runs `cHandlers`. */
function mesh(cHandlers: Handlers, localHere: Record<string, "live" | "lost"> = {}) {
  const calls: { op: string; caller: Identity; args: Record<string, unknown> }[] = [];
  const record =
    (op: string, result: object) =>
    (args: Record<string, unknown>, ctx: { caller: Identity }): object => {
      calls.push({ op, caller: ctx.caller, args });
      return result;
    };
  const onC = new Dispatcher({ ...quiet(C), handlers: cHandlers });
  const port = new FakeMesh(A, [B, C], new Map([[C, onC]]));
  port.setLink(B, true);
  port.setLink(C, true);
  const owners = new OwnerIndex();
  owners.peers(C, peersOf(C, [ON_C]));
  const forwarder = new Forwarder(port, owners, {
    localState: (sid) => localHere[sid],
    connected: (sid) => localHere[sid] === "live",
    fresh: async () => {},
  });
  const local: Handlers = {
    session_kill: (args) => {
      calls.push({ op: "local session_kill", caller: { role: "user" }, args });
      throw contractError("session_not_found", `no session ${args.sid}`);
    },
  };
  const onA = new Dispatcher({
    ...quiet(A),
    handlers: local,
    forwarder,
    linkPeer: (conn) => port.peerOf(conn),
  });
  return { port, owners, forwarder, onA, calls, record };
}

async function ask(d: Dispatcher, identity: Identity, frame: Record<string, unknown>) {
  const transport = memoryTransport();
  const conn = new Connection(transport, d);
  conn.greet(identity);
  transport.feed(JSON.stringify(frame));
  await vi.waitFor(() => expect(transport.frames().length).toBeGreaterThan(0), { timeout: 15_000 });
  return transport.frames()[0]!;
}

describe("forwarding an instance-local op (stage 6)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("forwards only ops whose subject is a session: the schemas say which", () => {
    for (const op of ["session_kill", "file_read", "transcript_read", "session_env_read"])
      expect(SUBJECT_SID_OPS.has(op as never)).toBe(true);
    // A substring of a sid, a cluster op, and an op about the caller itself.
    for (const op of ["session_search", "message_send", "session_stopping", "kv_read"])
      expect(SUBJECT_SID_OPS.has(op as never)).toBe(false);
  });

  it("carries a person's session_kill to the instance holding the session and brings its reply back under the requester's request_id", async () => {
    const calls: { caller: Identity; args: Record<string, unknown> }[] = [];
    const m = mesh({
      session_kill: (args, { caller }) => {
        calls.push({ caller, args: { ...args } });
        return { terminated: true };
      },
    });
    const reply = await ask(
      m.onA,
      { role: "user" },
      {
        op: "session_kill",
        request_id: "mine-7",
        sid: ON_C,
      },
    );
    expect(reply).toEqual({ ok: true, request_id: "mine-7", terminated: true });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.caller).toEqual({ role: "user" });
    const sent = m.port.sent[0]!;
    expect(sent.to).toBe(C);
    expect(sent.frame).toMatchObject({
      op: "session_kill",
      sid: ON_C,
      from_instance: A,
      hops: [A],
      caller: { role: "user" },
    });
    // The port assigns the link's own request_id.
    expect(sent.frame.request_id).toBeUndefined();
  });

  it("keeps the caller of a request that arrived on a link, and grows its hops", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    const transport = memoryTransport();
    const conn = new Connection(transport, m.onA);
    conn.greet({ role: "user" });
    m.port.markLink(conn, B);
    transport.feed(
      JSON.stringify({
        op: "session_kill",
        request_id: "via-b",
        sid: ON_C,
        from_instance: B,
        hops: [B],
        caller: { role: "user" },
      }),
    );
    await vi.waitFor(() => expect(transport.frames()).toHaveLength(1));
    expect(transport.frames()[0]).toMatchObject({ ok: true, request_id: "via-b" });
    expect(m.port.sent[0]!.frame).toMatchObject({ hops: [B, A], from_instance: A });
  });

  it("lets the destination decide again: a caller its table refuses is forbidden there", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    await expect(
      m.forwarder.forward(C, { op: "session_kill", sid: ON_C }, { role: "session", sid: ON_A }),
    ).rejects.toMatchObject({ code: "forbidden" });
    // Without a caller a forwarded request is the instance's own: refused too.
    await expect(
      m.forwarder.forward(C, { op: "session_kill", sid: ON_C }, undefined),
    ).rejects.toMatchObject({ code: "forbidden" });
  });

  it("refuses a session's user-only op before anything is forwarded", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    const reply = await ask(
      m.onA,
      { role: "session", sid: ON_A },
      {
        op: "session_kill",
        request_id: "1",
        sid: ON_C,
      },
    );
    expect(reply).toMatchObject({ ok: false, error: { code: "forbidden" } });
    expect(m.port.sent).toHaveLength(0);
  });

  it("answers instance_unreachable when the owner has no link, or never answers within 10 s", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    m.port.setLink(C, false);
    expect(
      await ask(m.onA, { role: "user" }, { op: "session_kill", request_id: "1", sid: ON_C }),
    ).toMatchObject({ ok: false, request_id: "1", error: { code: "instance_unreachable" } });
    expect(
      await ask(
        m.onA,
        { role: "user" },
        {
          op: "file_stat_batch",
          request_id: "2",
          sid: ON_A,
          paths: [],
          to_instance: C,
        },
      ),
    ).toMatchObject({ ok: false, error: { code: "instance_unreachable" } });

    m.port.setLink(C, true);
    m.port.silent.add(C);
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const transport = memoryTransport();
    const conn = new Connection(transport, m.onA);
    conn.greet({ role: "user" });
    transport.feed(JSON.stringify({ op: "session_kill", request_id: "3", sid: ON_C }));
    await vi.advanceTimersByTimeAsync(9_000);
    expect(transport.frames()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(transport.frames()[0]).toMatchObject({
      request_id: "3",
      error: { code: "instance_unreachable" },
    });
  });

  it("answers here what names this instance in to_instance, wherever its sid lives", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    expect(
      await ask(
        m.onA,
        { role: "user" },
        {
          ...{ op: "session_kill", request_id: "1", sid: ON_C, to_instance: A },
        },
      ),
    ).toMatchObject({ ok: false, error: { code: "session_not_found" } });
    expect(m.port.sent).toHaveLength(0);
  });

  it("answers here a sid no instance knows, and one whose owner the request already passed", async () => {
    const m = mesh({ session_kill: () => ({ terminated: true }) });
    expect(
      await ask(m.onA, { role: "user" }, { op: "session_kill", request_id: "1", sid: NOWHERE }),
    ).toMatchObject({ ok: false, error: { code: "session_not_found" } });
    const transport = memoryTransport();
    const conn = new Connection(transport, m.onA);
    conn.greet({ role: "user" });
    m.port.markLink(conn, C);
    transport.feed(
      JSON.stringify({
        ...{ op: "session_kill", request_id: "2", sid: ON_C },
        ...{ hops: [C], from_instance: C, caller: { role: "user" } },
      }),
    );
    await vi.waitFor(() => expect(transport.frames()).toHaveLength(1));
    expect(transport.frames()[0]).toMatchObject({ error: { code: "session_not_found" } });
    expect(m.port.sent).toHaveLength(0);
  });
});

describe("the owner of a sid", () => {
  it("is read from peers rows first (connected, here before elsewhere), then lost rows, then agents", () => {
    const owners = new OwnerIndex();
    const here: Record<string, "live" | "lost"> = {};
    const port = new FakeMesh(A, [B, C]);
    const f = new Forwarder(port, owners, {
      localState: (sid) => here[sid],
      connected: (sid) => here[sid] === "live",
      fresh: async () => {},
    });
    const S = ON_C;
    owners.agents(B, { agents: [{ sid: S }] });
    expect(f.ownerOf(S)).toBe(B);
    owners.peers(C, peersOf(C, [], [S]));
    expect(f.ownerOf(S)).toBe(C);
    here[S] = "lost";
    expect(f.ownerOf(S)).toBe(A);
    owners.peers(B, peersOf(B, [S]));
    expect(f.ownerOf(S)).toBe(B);
    here[S] = "live";
    expect(f.ownerOf(S)).toBe(A);
    // A newer frame replaces what a peer said.
    delete here[S];
    owners.peers(B, peersOf(B, []));
    owners.peers(C, peersOf(C, []));
    owners.agents(B, { agents: [] });
    expect(f.ownerOf(S)).toBeUndefined();
  });

  it("offers candidates live on peers in the same repository", () => {
    const owners = new OwnerIndex();
    owners.peers(C, {
      peers: [
        {
          sid: ON_C,
          instance: C,
          repo: "r",
          ws: "w2",
          cwd: "/r/w2",
          repo_root: "/r",
          protocol_version: 3,
        },
        { sid: NOWHERE, instance: C, repo: "x", ws: "x", cwd: "/x", protocol_version: 3 },
      ],
      last_live: [],
    });
    const f = new Forwarder(new FakeMesh(A, [C]), owners, {
      localState: () => undefined,
      connected: () => false,
      fresh: async () => {},
    });
    const local = [{ sid: ON_A, instance: A }];
    expect(f.candidates("/r", ON_A, local)).toEqual([
      { sid: ON_A, instance: A },
      { sid: ON_C, instance: C, ws: "w2" },
    ]);
  });
});

describe("message_send to another instance's session (§7.7 step 1)", () => {
  const send = (to: string) => ({ op: "message_send", to, text: "hi" });

  it("is answered by the owner, its reply as it gave it, `from` its caller", async () => {
    let seen: Identity | undefined;
    const m = mesh({
      message_send: (_args, { caller }) => {
        seen = caller;
        return { delivered: false, reason: "paused", candidates: [{ sid: ON_A, instance: A }] };
      },
    });
    const result = await m.forwarder.messageSend(send(ON_C), { role: "session", sid: ON_A });
    expect(result).toEqual({
      delivered: false,
      reason: "paused",
      candidates: [{ sid: ON_A, instance: A }],
    });
    expect(seen).toEqual({ role: "session", sid: ON_A });
  });

  it("is instance_unreachable, held nowhere, when the owner cannot be reached", async () => {
    const m = mesh({ message_send: () => ({ delivered: true }) });
    m.port.setLink(C, false);
    expect(await m.forwarder.messageSend(send(ON_C), { role: "user" })).toEqual({
      delivered: false,
      reason: "instance_unreachable",
    });
  });

  it("is instance_unreachable for a sid nobody knows while some instance is out of reach, else answered here", async () => {
    const m = mesh({});
    expect(await m.forwarder.messageSend(send(NOWHERE), { role: "user" })).toBeUndefined();
    m.port.setLink(B, false);
    expect(await m.forwarder.messageSend(send(NOWHERE), { role: "user" })).toEqual({
      delivered: false,
      reason: "instance_unreachable",
    });
  });

  it("is answered here for a session of this instance", async () => {
    const m = mesh({}, { [ON_C]: "live" });
    expect(await m.forwarder.messageSend(send(ON_C), { role: "user" })).toBeUndefined();
    expect(m.port.sent).toHaveLength(0);
  });

  it("reads who runs before deciding, for an addressee connected neither here nor to a peer only", async () => {
    let reads = 0;
    const port = new FakeMesh(A, [C]);
    port.setLink(C, true);
    const owners = new OwnerIndex();
    owners.peers(C, peersOf(C, [ON_C]));
    const here: Record<string, "live"> = { [ON_A]: "live" };
    const f = new Forwarder(port, owners, {
      localState: (sid) => here[sid],
      connected: (sid) => sid === ON_A,
      fresh: async () => {
        reads++;
      },
    });
    await f.messageSend(send(ON_A), { role: "user" });
    expect(reads).toBe(0);
    expect(await f.messageSend(send(NOWHERE), { role: "user" })).toBeUndefined();
    expect(reads).toBe(1);
    // Live by its harness process alone (no connection): it may have ended.
    here[NOWHERE] = "live";
    expect(await f.messageSend(send(NOWHERE), { role: "user" })).toBeUndefined();
    expect(reads).toBe(2);
  });

  it("is decided by dispatch's forward stage: the owner's handler answers, this instance's never runs", async () => {
    const m = mesh({ message_send: () => ({ delivered: true }) });
    let ranHere = 0;
    const onA = new Dispatcher({
      ...quiet(A),
      handlers: {
        message_send: () => {
          ranHere++;
          return { delivered: false, reason: "preparing" };
        },
      },
      forwarder: m.forwarder,
    });
    const frame = { op: "message_send", request_id: "1", to: ON_C, text: "hi" };
    expect(await ask(onA, { role: "session", sid: ON_A }, frame)).toMatchObject({
      ok: true,
      delivered: true,
    });
    expect(ranHere).toBe(0);
    const local = { ...frame, request_id: "2", to: NOWHERE };
    expect(await ask(onA, { role: "user" }, local)).toMatchObject({
      ok: true,
      delivered: false,
      reason: "preparing",
    });
    expect(ranHere).toBe(1);
  });
});
