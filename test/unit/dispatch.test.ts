import { describe, expect, it } from "vitest";
import { OP_NAMES, type OpName, opAttributes } from "../../src/contract/attributes.js";
import { PROTOCOL_VERSION } from "../../src/contract/constants.js";
import type { Identity } from "../../src/contract/envelope.js";
import { contractError } from "../../src/contract/errors.js";
import { OP_FIXTURES } from "../../src/contract/fixtures/index.js";
import { CAPABILITIES, type Capability } from "../../src/contract/identifiers.js";
import { Dispatcher, type Handlers } from "../../src/instance/dispatch.js";
import { Connection } from "../../src/instance/wire/connection.js";
import { type Logger, silentLogger } from "../../src/util/logger.js";
import { memoryTransport } from "../helpers/memory-transport.js";

const INSTANCE = "0".repeat(32);
const OTHER = "f".repeat(32);
const SID = "0f0e0d0c-0b0a-4908-8706-050403020100";

/** A valid request of `op` from the contract's fixtures, envelope mesh fields
 * removed, with `extra` merged in. */
function req(op: OpName, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const {
    to_instance: _t,
    from_instance: _f,
    hops: _h,
    caller: _c,
    ...frame
  } = OP_FIXTURES[op].request;
  return { ...frame, ...extra };
}

function dispatcher(handlers: Handlers = {}, capabilities: Capability[] = []) {
  const logged: Record<string, unknown>[] = [];
  const log: Logger = {
    ...silentLogger,
    error: (fields, msg) => logged.push({ ...(fields as object), msg }),
  };
  const d = new Dispatcher({
    ...{ instanceId: INSTANCE, handlers, admin: {}, capabilities: new Set(capabilities) },
    ...{ log, onRequest: () => {} },
  });
  return { d, logged };
}

function connection(d: Dispatcher, identity?: Identity) {
  const transport = memoryTransport();
  const conn = new Connection(transport, d);
  if (identity !== undefined) conn.greet(identity);
  return { conn, transport };
}

const session: Identity = { role: "session", sid: SID };
const user: Identity = { role: "user" };

/**
 * The order of checks (contract §1.8) as a table: each row is a frame that
 * breaks exactly the rules from its stage on, so the code it gets proves
 * which stage answered first.
 */
const STAGES: {
  name: string;
  frame: unknown;
  identity?: Identity;
  capabilities?: Capability[];
  code: string;
}[] = [
  { name: "not an object", frame: [1, 2], code: "bad_request" },
  { name: "no request_id", frame: { op: "instance_ping" }, code: "bad_request" },
  { name: "no op", frame: { request_id: "1" }, code: "bad_request" },
  {
    name: "an op outside the table, before its arguments are read",
    frame: { op: "no_such_op", request_id: "1", to: 5 },
    code: "unknown_op",
  },
  {
    name: "bad arguments before any identity is asked for",
    frame: req("message_send", { to: "not-a-sid" }),
    code: "invalid_args",
  },
  {
    name: "a role rule no schema states is invalid_args too",
    frame: req("hello", { role: "user", sid: SID, protocol_version: PROTOCOL_VERSION }),
    code: "invalid_args",
  },
  {
    name: "another generation's hello",
    frame: req("hello", { protocol_version: PROTOCOL_VERSION + 1 }),
    code: "bad_request",
  },
  {
    name: "a second hello",
    frame: req("hello", { protocol_version: PROTOCOL_VERSION }),
    identity: user,
    code: "bad_request",
  },
  { name: "no hello yet", frame: req("message_send"), code: "hello_required" },
  {
    name: "a role outside the row, before the capability",
    frame: req("session_rename"),
    identity: session,
    code: "forbidden",
  },
  {
    name: "a missing capability",
    frame: req("session_rename"),
    identity: user,
    code: "capability_unavailable",
  },
  {
    name: "an instance-local op for an instance with no link",
    frame: req("file_read", { to_instance: OTHER }),
    identity: user,
    code: "instance_unreachable",
  },
  {
    name: "a cluster op is answered here whatever to_instance says",
    frame: req("kv_read", { to_instance: OTHER }),
    identity: user,
    code: "admitted",
  },
];

describe("the dispatcher's order of checks", () => {
  for (const row of STAGES) {
    it(`answers ${row.code} for ${row.name}`, () => {
      const { d } = dispatcher({}, row.capabilities);
      const conn = { identity: row.identity };
      const staged = d.admit(conn, row.frame);
      expect("code" in staged ? staged.code : "admitted").toBe(row.code);
    });
  }

  it("checks every op's own fixture request through to the handler stage for its roles", () => {
    const refused: string[] = [];
    const { d } = dispatcher({}, [...CAPABILITIES]);
    for (const op of OP_NAMES) {
      if (op === "hello") continue;
      const staged = d.admit({ identity: user }, req(op));
      if ("code" in staged && staged.code !== "forbidden") refused.push(`${op}: ${staged.code}`);
    }
    expect(refused).toEqual([]);
  });
});

describe("what a refusal says", () => {
  it("a request_id of the wrong type is named as such, not as missing", () => {
    const { d } = dispatcher();
    const msg = (request_id: unknown) => {
      const staged = d.admit({ identity: undefined }, { op: "instance_ping", request_id });
      return "code" in staged ? `${staged.code}: ${staged.msg}` : "admitted";
    };
    expect(msg(7)).toBe("bad_request: request_id must be a string, not a number");
    expect(msg(null)).toBe("bad_request: request_id must be a string, not null");
    expect(msg(["a"])).toBe("bad_request: request_id must be a string, not an array");
    expect(msg(undefined)).toBe("bad_request: missing request_id");
    expect(msg("")).toBe("bad_request: request_id is empty");
  });

  it("an HTTP-carried auth op sent as a frame is bad_request saying it goes over HTTP, never internal_error", async () => {
    const { d } = dispatcher();
    const { conn, transport } = connection(d, user);
    transport.feed(JSON.stringify(req("auth_challenge", { request_id: "c" })));
    await d.idle(1000);
    expect(transport.frames()[0]).toEqual({
      ok: false,
      request_id: "c",
      error: { code: "bad_request", msg: expect.stringContaining("carried over HTTP only") },
    });
    expect(conn.state).toBe("greeted");
  });
});

describe("the dispatcher's handler stage", () => {
  it("writes the handler's result as the reply, with the request's id", async () => {
    const { d } = dispatcher({ kv_read: ({ key }) => ({ value: key, updated_at: 5 }) });
    const { transport } = connection(d, user);
    transport.feed(JSON.stringify(req("kv_read", { request_id: "r9", key: "k" })));
    await d.idle(1000);
    expect(transport.frames()).toEqual([{ ok: true, request_id: "r9", value: "k", updated_at: 5 }]);
  });

  it("answers an op without a handler internal_error, never unknown_op", async () => {
    const { d } = dispatcher();
    const { transport } = connection(d, user);
    transport.feed(JSON.stringify(req("file_read", { request_id: "x" })));
    await d.idle(1000);
    expect(transport.frames()[0]).toMatchObject({
      ok: false,
      request_id: "x",
      error: { code: "internal_error", msg: "file_read: not implemented in this build" },
    });
  });

  it("passes a contract error from a handler through with its code", async () => {
    const { d } = dispatcher({
      kv_read: () => {
        throw contractError("not_found", "no key k in ns");
      },
    });
    const { transport } = connection(d, user);
    transport.feed(JSON.stringify(req("kv_read", { request_id: "1" })));
    await d.idle(1000);
    expect(transport.frames()[0]).toEqual({
      ok: false,
      request_id: "1",
      error: { code: "not_found", msg: "no key k in ns" },
    });
  });

  it("turns a handler's unexpected failure into internal_error with a log line, and keeps serving", async () => {
    const { d, logged } = dispatcher({
      instance_ping: () => {
        throw new Error("boom");
      },
    });
    const { transport } = connection(d, user);
    transport.feed(JSON.stringify({ op: "instance_ping", request_id: "1" }));
    await d.idle(1000);
    expect(transport.frames()[0]).toEqual({
      ok: false,
      request_id: "1",
      error: { code: "internal_error", msg: "instance_ping failed inside the instance" },
    });
    expect(logged).toEqual([
      expect.objectContaining({ msg: "handler failed", op: "instance_ping", request_id: "1" }),
    ]);
    transport.feed(JSON.stringify({ op: "instance_ping", request_id: "2" }));
    await d.idle(1000);
    expect(transport.frames()[1]!.request_id).toBe("2");
  });

  it("settles the identity only when hello succeeds, and holds later frames until it has", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const { d } = dispatcher({
      async hello() {
        await gate;
        return {
          protocol_version: PROTOCOL_VERSION,
          instance: INSTANCE,
          instances: [],
          capabilities: [],
          version: "t",
          started_at: 0,
        };
      },
      say_post: (_args, { caller }) => ({ posted_at: caller.sid.length }),
    });
    const { conn, transport } = connection(d);
    transport.feed(
      JSON.stringify(req("hello", { request_id: "h", protocol_version: PROTOCOL_VERSION })),
    );
    transport.feed(JSON.stringify(req("say_post", { request_id: "s" })));
    await new Promise((r) => setImmediate(r));
    expect(conn.state).toBe("opening");
    expect(transport.frames()).toEqual([]);
    release();
    await new Promise((r) => setTimeout(r, 10));
    await d.idle(1000);
    expect(conn.state).toBe("greeted");
    expect(conn.identity).toEqual({ role: "session", sid: SID });
    expect(transport.frames().map((f) => [f.request_id, f.ok])).toEqual([
      ["h", true],
      ["s", true],
    ]);
  });

  it("refuses a session naming another session's sid where the row says own_sid, with the row's code, before the handler", async () => {
    const other = "1f0e0d0c-0b0a-4908-8706-050403020101";
    const ran: string[] = [];
    const handlers: Handlers = {};
    const ops = OP_NAMES.filter((op) => opAttributes(op).own_sid !== undefined);
    for (const op of ops)
      Object.assign(handlers, {
        [op]: () => {
          ran.push(op);
          return {};
        },
      });
    const { d } = dispatcher(handlers);
    const answers = async (identity: Identity, sid: string) => {
      const { transport } = connection(d, identity);
      for (const op of ops) transport.feed(JSON.stringify(req(op, { request_id: op, sid })));
      await d.idle(1000);
      return transport
        .frames()
        .map((f) => [f.request_id, f.ok ? "ok" : (f.error as { code: string }).code]);
    };
    expect(await answers(session, other)).toEqual([
      ["transcript_read", "forbidden"],
      ["transcript_items_read", "forbidden"],
      ["dir_list", "path_forbidden"],
      ["file_read", "path_forbidden"],
    ]);
    expect(ran).toEqual([]);
    expect(await answers(session, SID)).toEqual(ops.map((op) => [op, "ok"]));
    expect(await answers(user, other)).toEqual(ops.map((op) => [op, "ok"]));
    expect(ran).toHaveLength(2 * ops.length);
  });

  it("refuses every request once stopping, with the connection still open", async () => {
    const { d } = dispatcher({ instance_ping: () => ({}) as never });
    const { conn, transport } = connection(d, user);
    d.stop();
    transport.feed(JSON.stringify({ op: "instance_ping", request_id: "1" }));
    await d.idle(1000);
    expect(transport.frames()[0]).toMatchObject({
      error: { code: "internal_error", msg: "instance is shutting down" },
    });
    expect(conn.state).toBe("greeted");
  });
});
