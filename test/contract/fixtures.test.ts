import type { TSchema } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import {
  ECC_FIXTURES,
  fixture,
  HUD_FIXTURES,
  OP_FIXTURES,
  TOPIC_FIXTURES,
} from "../../src/contract/fixtures/index.js";
import {
  ClaimRequest,
  ClaimResponse,
  ControlPaneError,
  HUD_SECTIONS,
  HudStatus,
  hudRuleViolations,
  isValid,
  MoveRequest,
  MoveResponse,
  OP_NAMES,
  OP_SCHEMAS,
  replyErrors,
  requestErrors,
  TOPIC_KINDS,
  TOPIC_SCHEMAS,
  topicFrameErrors,
  validationErrors,
} from "../../src/contract/index.js";

// Every fixture passes its schema, and mutated copies fail it: a fixture that
// no mutation can break would prove nothing about the schema.

type Obj = Record<string, unknown>;

const CANDIDATES: unknown[] = [12345, "x", null, [], {}, true, -1.5];

/** A value the property's schema refuses, or undefined when it accepts any. */
function wrongValueFor(schema: TSchema): unknown {
  return CANDIDATES.find((v) => !isValid(schema, v));
}

/** Copies of `value` with one member broken each: deleted when required,
 * replaced by a value of a wrong type when its schema refuses one. */
function mutations(value: Obj, schema: TSchema, skip: ReadonlySet<string>): [string, Obj][] {
  const out: [string, Obj][] = [];
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  for (const [name, prop] of Object.entries(props)) {
    if (skip.has(name)) continue;
    if (required.has(name) && name in value) {
      const copy = fixture(value);
      delete copy[name];
      out.push([`without ${name}`, copy]);
    }
    const wrong = wrongValueFor(prop);
    if (wrong !== undefined && name in value) {
      const copy = fixture(value);
      copy[name] = wrong;
      out.push([`${name} = ${JSON.stringify(wrong)}`, copy]);
    }
  }
  return out;
}

const ENVELOPE = new Set(["op", "request_id", "to_instance", "from_instance", "hops", "caller"]);

describe("op fixtures", () => {
  for (const op of OP_NAMES) {
    const { request, reply } = OP_FIXTURES[op];

    it(`${op}: the request fixture passes its schema and rules`, () => {
      expect(request.op).toBe(op);
      expect(requestErrors(op, request)).toEqual([]);
    });

    it(`${op}: the reply fixture passes its schema`, () => {
      expect(replyErrors(op, reply)).toEqual([]);
    });

    it(`${op}: mutated requests fail`, () => {
      const muts = mutations(request, OP_SCHEMAS[op].request, ENVELOPE);
      muts.push(["empty request_id", { ...fixture(request), request_id: "" }]);
      muts.push([
        "another op",
        { ...fixture(request), op: op === "hello" ? "instance_ping" : "hello" },
      ]);
      const accepted = muts
        .filter(([, m]) => requestErrors(op, m).length === 0)
        .map(([why]) => why);
      expect(accepted).toEqual([]);
    });

    it(`${op}: mutated replies fail`, () => {
      const muts = mutations(reply, OP_SCHEMAS[op].response, new Set(["ok", "request_id"]));
      muts.push(["ok = false without error", { ...fixture(reply), ok: false }]);
      const accepted = muts.filter(([, m]) => replyErrors(op, m).length === 0).map(([why]) => why);
      expect(accepted).toEqual([]);
    });
  }
});

describe("topic fixtures", () => {
  for (const kind of TOPIC_KINDS) {
    it(`${kind}: every frame fixture passes the frame schema`, () => {
      expect(TOPIC_FIXTURES[kind].length).toBeGreaterThan(0);
      for (const frame of TOPIC_FIXTURES[kind]) expect(topicFrameErrors(frame)).toEqual([]);
    });

    it(`${kind}: mutated frames fail`, () => {
      const frame = TOPIC_FIXTURES[kind][0]!;
      const schema = TOPIC_SCHEMAS[kind];
      const muts: [string, Obj][] = [
        ["instance not an id", { ...fixture(frame), instance: "nope" }],
        ["ev missing", (({ ev: _ev, ...rest }) => rest)(fixture(frame))],
        ["data a number", { ...fixture(frame), data: 12345 }],
        ["snapshot false", { ...fixture(frame), snapshot: false }],
      ];
      const data = frame.data;
      const dataSchema = (schema.properties as Record<string, TSchema>).data!;
      if (Array.isArray(data)) {
        muts.push(["an element of the wrong type", { ...fixture(frame), data: [...data, 12345] }]);
      } else if (typeof data === "object" && data !== null) {
        for (const [why, m] of mutations(data as Obj, dataSchema, new Set())) {
          muts.push([`data ${why}`, { ...fixture(frame), data: m }]);
        }
      }
      const accepted = muts.filter(([, m]) => topicFrameErrors(m).length === 0).map(([why]) => why);
      expect(accepted).toEqual([]);
    });
  }

  it("a frame whose topic this generation does not define fails", () => {
    const frame = { ...fixture(TOPIC_FIXTURES.peers[0]!), topic: "nonsense:topic" };
    expect(topicFrameErrors(frame)).not.toEqual([]);
  });
});

describe("HUD fixtures", () => {
  it("the complete payload and the all-unknown payload validate", () => {
    for (const payload of [HUD_FIXTURES.complete, HUD_FIXTURES.unknown]) {
      expect(validationErrors(HudStatus, payload)).toEqual([]);
      expect(hudRuleViolations(payload as never)).toEqual([]);
    }
  });

  it("each of the ten section keys must be an own property", () => {
    expect(HUD_SECTIONS).toHaveLength(10);
    const accepted = HUD_SECTIONS.filter((key) => {
      const copy = fixture(HUD_FIXTURES.complete);
      delete copy[key];
      return isValid(HudStatus, copy);
    });
    expect(accepted).toEqual([]);
  });

  it("refuses another schema_version, or the camelCase schemaVersion key", () => {
    const { schema_version: _v, ...rest } = fixture(HUD_FIXTURES.complete);
    expect(isValid(HudStatus, { ...rest, schemaVersion: "ecc.hud-status.v1" })).toBe(false);
    expect(isValid(HudStatus, { ...rest, schema_version: "ecc.hud-status.v2" })).toBe(false);
  });

  it('accepts null, [] and "unknown" for a signal, and nothing else invented', () => {
    for (const missing of [null, [], "unknown"]) {
      const copy = fixture(HUD_FIXTURES.complete) as Obj & { cost: Obj };
      copy.cost.sessionUsd = missing;
      expect(isValid(HudStatus, copy), JSON.stringify(missing)).toBe(true);
    }
    const copy = fixture(HUD_FIXTURES.complete) as Obj & { cost: Obj };
    copy.cost.sessionUsd = "n/a";
    expect(isValid(HudStatus, copy)).toBe(false);
  });

  it("blocked controls are { control, reason } with a control of the vocabulary", () => {
    const copy = fixture(HUD_FIXTURES.complete) as Obj & { sessionControls: Obj };
    copy.sessionControls.blocked = ["pr"];
    expect(isValid(HudStatus, copy)).toBe(false);
    copy.sessionControls.blocked = [{ control: "deploy", reason: "no" }];
    expect(isValid(HudStatus, copy)).toBe(false);
  });

  it("a control listed as both supported and blocked breaks the rule", () => {
    const copy = fixture(HUD_FIXTURES.complete) as never as {
      sessionControls: { supported: string[] };
    };
    copy.sessionControls.supported.push("pr");
    expect(hudRuleViolations(copy as never)).toEqual([
      "/sessionControls: pr appears more than once",
    ]);
  });
});

describe("control-pane fixtures", () => {
  it("requests and responses validate against their shapes", () => {
    expect(validationErrors(ClaimRequest, ECC_FIXTURES.claimRequest)).toEqual([]);
    expect(validationErrors(ClaimResponse, ECC_FIXTURES.claimResponse)).toEqual([]);
    expect(validationErrors(MoveRequest, ECC_FIXTURES.moveRequest)).toEqual([]);
    expect(validationErrors(MoveResponse, ECC_FIXTURES.moveResponse)).toEqual([]);
    expect(validationErrors(ControlPaneError, ECC_FIXTURES.busyResponse)).toEqual([]);
  });

  it("refuses a claim without owner, an unknown kind, and an invalid lane", () => {
    expect(isValid(ClaimRequest, { as: "human" })).toBe(false);
    expect(isValid(ClaimRequest, { owner: "alice", as: "robot" })).toBe(false);
    expect(isValid(MoveRequest, { lane: "imaginary" })).toBe(false);
  });
});
