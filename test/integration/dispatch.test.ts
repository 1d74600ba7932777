import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FIXTURE_IDS, fixture, OP_FIXTURES } from "../../src/contract/fixtures/index.js";
import {
  isOpName,
  MAX_FRAME_BYTES,
  OP_ATTRIBUTES,
  OP_NAMES,
  type OpName,
  opErrors,
  ROLES,
  type Role,
  TOPIC_ATTRIBUTES,
  TOPIC_KINDS,
} from "../../src/contract/index.js";
import { tmuxInstalled } from "../../src/harness/tmux.js";
import { ROOT, sharedInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// The authorization matrix of scenario 18, on a real instance: every op ×
// every role, before a greeting, with bad arguments, and an unknown op — with
// the connection still usable after every refusal.

/** Ops this build implements — the keys of every handler family's table
 * (each `handlers.ts` and `*-handlers.ts` below src/instance/; no handler
 * runs); every
 * other op answers internal_error "not implemented in this build" (or a
 * table refusal before that), except the HTTP-carried auth ops, which are
 * bad_request as frames. */
const IMPLEMENTED = await implementedOps();

async function implementedOps(): Promise<Set<string>> {
  const dir = join(ROOT, "src", "instance");
  const modules = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
    /(^|\/|-)handlers\.ts$/.test(f),
  );
  const ops = new Set<string>();
  for (const file of modules) {
    const families: Record<string, unknown> = await import(join(dir, file));
    for (const [name, family] of Object.entries(families))
      if (/Handlers$/.test(name) && typeof family === "function")
        for (const op of Object.keys(family({}))) if (isOpName(op)) ops.add(op);
  }
  return ops;
}

/** What this machine lets the instance offer: `terminal` where tmux is
 * installed (DR-0031), `fork` for a Claude Code home (DR-0039), and
 * `sandbox` with its HTTP listener on loopback (DR-0042); no `launcher`
 * without its config. */
const CAPABILITIES = new Set([...(tmuxInstalled() ? ["terminal"] : []), "fork", "sandbox"]);

/** Ops the matrix does not execute: `hello` settles identity (tested on its
 * own) and `instance_shutdown` would stop the instance under test. */
const NOT_EXECUTED = new Set<OpName>(["hello", "instance_shutdown"]);

const MESH = {
  ver: 1,
  iss: "https://peer.example/",
  aud: "https://self.example/",
  id: FIXTURE_IDS.otherInstance,
  kid: "0123456789abcdef0123",
};

const shared = sharedInstance();
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function greeted(role: Role, sid = newSid()): Promise<Peer> {
  const peer = await Peer.unix(shared.inst.socket);
  const args = role === "session" ? { sid } : role === "instance" ? { mesh: MESH } : {};
  await peer.call("hello", { role, protocol_version: 3, ...args });
  return peer;
}

/** A fixture request without mesh-routing fields, as its own caller sends it. */
function requestOf(op: OpName): Record<string, unknown> {
  const { op: _op, request_id: _id, to_instance: _to, ...args } = fixture(OP_FIXTURES[op].request);
  return args;
}

/** What the table says `role` gets from `op` with valid arguments. */
function expected(op: OpName, role: Role): string[] {
  const a = OP_ATTRIBUTES[op] as (typeof OP_ATTRIBUTES)[OpName] & {
    capability?: string;
    carrier?: "http";
  };
  if (!(a.roles as readonly Role[]).includes(role)) return ["forbidden"];
  if (a.capability !== undefined && !CAPABILITIES.has(a.capability))
    return ["capability_unavailable"];
  // An HTTP-carried auth op never arrives as a frame (contract §4.1 `carrier`).
  if (a.carrier === "http") return ["bad_request"];
  if (!IMPLEMENTED.has(op)) return ["internal_error"];
  // topic_subscribe also answers the topic table's refusals (contract §3.2).
  const fromTopics = op === "topic_subscribe" ? ["forbidden", "capability_unavailable"] : [];
  return ["ok", ...opErrors(op), ...fromTopics];
}

describe("dispatch order and the authorization matrix", () => {
  it("an unknown op is unknown_op, and the connection stays usable", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const r = await peer.request("no_such_op");
    expect(r.error?.code).toBe("unknown_op");
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });

  it("every op with bad arguments is invalid_args — before hello_required", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const offenders: string[] = [];
    for (const op of OP_NAMES) {
      // A number where every op's first required field (or the whole
      // request) expects something else.
      const args = { ...requestOf(op), hops: "not an array" };
      const r = await peer.request(op, args);
      if (r.error?.code !== "invalid_args") offenders.push(`${op}: ${JSON.stringify(r)}`);
    }
    expect(offenders).toEqual([]);
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });

  it("every op that needs hello answers hello_required before a greeting", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const offenders: string[] = [];
    for (const op of OP_NAMES) {
      if (!OP_ATTRIBUTES[op].needs_hello) continue;
      const r = await peer.request(op, requestOf(op));
      if (r.error?.code !== "hello_required") offenders.push(`${op}: ${r.error?.code}`);
    }
    expect(offenders).toEqual([]);
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });

  for (const role of ROLES) {
    it(`role ${role}: every op answers as the table says, connection kept`, async () => {
      const peer = await greeted(role);
      const offenders: string[] = [];
      for (const op of OP_NAMES) {
        if (NOT_EXECUTED.has(op)) {
          if (!(OP_ATTRIBUTES[op].roles as readonly Role[]).includes(role)) {
            const r = await peer.request(op, requestOf(op));
            if (op !== "hello" && r.error?.code !== "forbidden")
              offenders.push(`${op}: ${r.error?.code}`);
          }
          continue;
        }
        const r = await peer.request(op, requestOf(op));
        const got = r.ok ? "ok" : r.error!.code;
        if (!expected(op, role).includes(got)) {
          offenders.push(
            `${op}: got ${got} (${r.error?.msg ?? ""}), expected ${expected(op, role).join("|")}`,
          );
        }
        if (
          !IMPLEMENTED.has(op) &&
          got === "internal_error" &&
          !r.error!.msg.includes("not implemented")
        ) {
          offenders.push(`${op}: internal_error without "not implemented"`);
        }
      }
      expect(offenders).toEqual([]);
      expect((await peer.request("instance_ping")).ok).toBe(true);
      peer.close();
    });
  }

  it("an instance-local op addressed to another instance is instance_unreachable", async () => {
    const peer = await greeted("user");
    const r = await peer.request("session_last_live_remove", {
      sid: newSid(),
      to_instance: FIXTURE_IDS.otherInstance,
    });
    expect(r.error?.code).toBe("instance_unreachable");
    const self = await peer.request("session_last_live_remove", {
      sid: newSid(),
      to_instance: shared.inst.id,
    });
    expect(self).toMatchObject({ ok: true, removed: false });
    peer.close();
  });
});

describe("hello", () => {
  const hello = (extra: Record<string, unknown>) => ({ protocol_version: 3, ...extra });

  it("refuses each role's missing field or another role's field with invalid_args", async () => {
    const cases = [
      hello({ role: "session" }),
      hello({ role: "user", sid: newSid() }),
      hello({ role: "session", sid: newSid(), mesh: MESH }),
      hello({ role: "instance" }),
    ];
    const peer = await Peer.unix(shared.inst.socket);
    for (const c of cases)
      expect((await peer.request("hello", c)).error?.code, JSON.stringify(c)).toBe("invalid_args");
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });

  it("refuses another generation and a second greeting with bad_request", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    expect((await peer.request("hello", { role: "user", protocol_version: 2 })).error?.code).toBe(
      "bad_request",
    );
    await peer.helloUser();
    expect((await peer.request("hello", { role: "user", protocol_version: 3 })).error?.code).toBe(
      "bad_request",
    );
    expect(
      (await peer.request("hello", { role: "session", protocol_version: 3, sid: newSid() })).error
        ?.code,
    ).toBe("bad_request");
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });

  it("reports the instance, itself in instances, its capabilities, and its start", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const r = await peer.helloUser();
    expect(r).toMatchObject({
      protocol_version: 3,
      instance: shared.inst.id,
      capabilities: [...CAPABILITIES],
    });
    expect(r.instances).toEqual([expect.objectContaining({ id: shared.inst.id, reachable: true })]);
    peer.close();
  });

  it("frames pipelined behind a greeting are judged after it settles", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const sid = newSid();
    const greeting = peer.request("hello", { role: "session", protocol_version: 3, sid });
    const stop = peer.request("session_stopping", {});
    expect((await greeting).ok).toBe(true);
    expect((await stop).ok).toBe(true);
    peer.close();
  });
});

describe("bad frames", () => {
  it("unparseable JSON and an over-limit line are bad_request without request_id; the connection stays", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const replies: unknown[] = [];
    peer.client.onLine((_l, parsed) => replies.push(parsed));
    peer.client.sendRaw("{not json\n");
    peer.client.sendRaw(`${"x".repeat(MAX_FRAME_BYTES + 1)}\n`);
    peer.client.sendRaw(`{"op":"instance_ping"}\n`);
    peer.client.sendRaw(`[1,2]\n`);
    const ping = await peer.request("instance_ping");
    expect(ping.ok).toBe(true);
    const refusals = replies.filter((r) => (r as { ok?: boolean }).ok === false);
    expect(refusals).toEqual([
      { ok: false, error: { code: "bad_request", msg: expect.stringContaining("JSON") } },
      {
        ok: false,
        error: { code: "bad_request", msg: expect.stringContaining("MAX_FRAME_BYTES") },
      },
      { ok: false, error: { code: "bad_request", msg: "missing request_id" } },
      { ok: false, error: { code: "bad_request", msg: expect.any(String) } },
    ]);
    peer.close();
  });

  it("a frame of exactly MAX_FRAME_BYTES is accepted", async () => {
    const peer = await greeted("user");
    // A member no op declares is accepted (DR-0002) and echoed nowhere.
    const head = `{"op":"instance_ping","request_id":"big","pad":"`;
    const tail = `"}`;
    const value = "v".repeat(MAX_FRAME_BYTES - head.length - tail.length);
    const reply = new Promise<unknown>((resolve) =>
      peer.client.onLine((_l, p) => {
        if ((p as { request_id?: string }).request_id === "big") resolve(p);
      }),
    );
    peer.raw(`${head}${value}${tail}\n`, { big: "instance_ping" });
    expect(await reply).toMatchObject({ ok: true });
    peer.close();
  });

  it("the same refusals over WebSocket", async () => {
    const peer = await Peer.ws(`${shared.inst.http}ws`);
    expect((await peer.request("no_such_op")).error?.code).toBe("unknown_op");
    expect((await peer.request("kv_read", { ns: "a", key: "b" })).error?.code).toBe(
      "hello_required",
    );
    await peer.helloUser();
    expect((await peer.request("session_stopping")).error?.code).toBe("forbidden");
    expect((await peer.request("instance_ping")).ok).toBe(true);
    peer.close();
  });
});

describe("topic subscriptions", () => {
  it("the topic table decides: forbidden, capability_unavailable, topic_unknown", async () => {
    const session = await greeted("session");
    expect((await session.request("topic_subscribe", { topic: "agents" })).error?.code).toBe(
      "forbidden",
    );
    expect(
      (await session.request("topic_subscribe", { topic: "nonsense:topic" })).error?.code,
    ).toBe("topic_unknown");
    const person = await greeted("user");
    expect((await person.request("topic_subscribe", { topic: "auth_records" })).error?.code).toBe(
      "forbidden",
    );
    expect((await person.request("topic_subscribe", { topic: "llm_requests" })).error?.code).toBe(
      "capability_unavailable",
    );
    expect((await person.request("topic_unsubscribe", { topic: "peers:x" })).error?.code).toBe(
      "topic_unknown",
    );
    for (const p of [session, person]) {
      expect((await p.request("instance_ping")).ok).toBe(true);
      p.close();
    }
  });

  it("every kind a role may hold answers with a snapshot, or says it is not built yet", async () => {
    // A session's own sid: some kinds (`receipts:<sid>`) are its own only.
    const sid = newSid();
    const offenders: string[] = [];
    for (const role of ROLES) {
      const peer = await greeted(role, sid);
      for (const kind of TOPIC_KINDS) {
        const a = TOPIC_ATTRIBUTES[kind] as {
          roles: readonly Role[];
          capability?: string;
          param?: string;
        };
        if (!a.roles.includes(role) || a.capability !== undefined) continue;
        const topic =
          a.param === "sid" ? `${kind}:${sid}` : a.param === "ns" ? `${kind}:notes` : kind;
        const r = await peer.request("topic_subscribe", { topic });
        if (!r.ok) {
          if (!(r.error?.code === "internal_error" && r.error.msg.includes("not implemented"))) {
            offenders.push(`${role} ${topic}: ${r.error?.code}`);
          }
          continue;
        }
        if (kind === "notify") continue;
        await peer.next((f) => f.topic === topic && f.snapshot === true);
      }
      peer.close();
    }
    expect(offenders).toEqual([]);
  });
});

describe("concurrency on one connection", () => {
  it("requests complete in any order, each reply correlated by request_id", async () => {
    const peer = await greeted("session");
    // A held message waits for its commit; a ping does not. Sent in one write,
    // the ping is answered first.
    const order: string[] = [];
    const both = new Promise<void>((resolve) =>
      peer.client.onLine((_l, parsed) => {
        const id = (parsed as { request_id?: string }).request_id;
        if (id === "slow" || id === "fast") order.push(id);
        if (order.length === 2) resolve();
      }),
    );
    const sid = newSid();
    const holder = await Peer.unix(shared.inst.socket);
    await holder.helloSession(sid);
    peer.raw(
      `${JSON.stringify({ op: "message_send", request_id: "slow", to: sid, text: "held" })}\n` +
        `${JSON.stringify({ op: "instance_ping", request_id: "fast" })}\n`,
      { slow: "message_send", fast: "instance_ping" },
    );
    await both;
    expect(order).toEqual(["fast", "slow"]);
    for (const p of [peer, holder]) p.close();
  });
});
