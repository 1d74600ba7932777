import type { TSchema } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { OP_SCHEMAS, validationErrors } from "../../src/contract/index.js";
import { wireSchemas } from "./walk.js";

// An `invalid_args` message is read by a person (or an agent relaying it):
// it says what the value should be in words, never as a regular expression.

/** Every string schema with a pattern, anywhere on the wire, once each. */
function patternSchemas(): { where: string; schema: TSchema & { pattern: string } }[] {
  const out: { where: string; schema: TSchema & { pattern: string } }[] = [];
  const seen = new Set<object>();
  const visit = (node: unknown, where: string) => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    seen.add(node);
    const s = node as Record<string, unknown>;
    if (s.type === "string" && typeof s.pattern === "string")
      out.push({ where, schema: s as TSchema & { pattern: string } });
    for (const [k, v] of Object.entries(s)) visit(v, k === "properties" ? where : `${where}/${k}`);
  };
  for (const [name, schema] of wireSchemas()) visit(schema, name);
  return out;
}

describe("invalid_args messages", () => {
  it("every patterned string on the wire describes its form in words", () => {
    const found = patternSchemas();
    expect(found.length).toBeGreaterThan(10);
    const undescribed = found
      .filter(({ schema }) => typeof schema.description !== "string" || schema.description === "")
      .map(({ where, schema }) => `${where}: ${schema.pattern}`);
    expect([...new Set(undescribed)]).toEqual([]);
  });

  it("a value of the wrong form gets the description, never the pattern", () => {
    for (const { where, schema } of patternSchemas()) {
      const errors = validationErrors(schema, "\u0001 not it");
      expect({ where, errors: errors.length > 0 }).toEqual({ where, errors: true });
      for (const e of errors) {
        expect({ where, e, pattern: e.includes(schema.pattern) }).toMatchObject({ pattern: false });
        expect(e).toContain(schema.description!);
      }
    }
  });

  it("a malformed session id: the field, the value, and what a session id is", () => {
    const errors = validationErrors(OP_SCHEMAS.message_send.request, {
      op: "message_send",
      request_id: "1",
      to: "nope",
      text: "hi",
    });
    expect(errors).toEqual(['/to: "nope" is not valid: a session id is a lower-case UUID']);
  });

  it("text with a control character or out of its length says so in words", () => {
    const bad = validationErrors(OP_SCHEMAS.kv_write.request, {
      op: "kv_write",
      request_id: "1",
      ns: "notes",
      key: "a\tb",
      value: 1,
    });
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^\/key: "a\\tb" is not valid: .*control characters/);
    const long = validationErrors(OP_SCHEMAS.kv_write.request, {
      op: "kv_write",
      request_id: "1",
      ns: "notes",
      key: "k".repeat(300),
      value: 1,
    });
    expect(long).toHaveLength(1);
    expect(long[0]).toContain("1 to 256 characters");
    expect(long[0]).not.toContain("CodePointString");
  });
});
