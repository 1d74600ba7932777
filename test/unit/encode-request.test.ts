import { describe, expect, it } from "vitest";
import { encodeRequest } from "../../src/contract/frames.js";

// A request line is the op's arguments with the envelope fields after them,
// one object: what the instance reads is the same whatever the arguments hold.
describe("encodeRequest", () => {
  it("puts op and request_id after the arguments, in their order", () => {
    const line = encodeRequest("message_send", "7", { to: "b", text: 'say "hi"\n', n: 2 });
    expect(line).toBe(
      '{"to":"b","text":"say \\"hi\\"\\n","n":2,"op":"message_send","request_id":"7"}',
    );
  });

  it("writes only the envelope for no arguments", () => {
    expect(encodeRequest("instance_ping", "1", {})).toBe('{"op":"instance_ping","request_id":"1"}');
  });

  it("leaves out undefined arguments and escapes the envelope's own values", () => {
    const line = encodeRequest('we"ird', 'id\\"x', { a: undefined, b: [1, { c: null }] });
    expect(JSON.parse(line)).toEqual({ b: [1, { c: null }], op: 'we"ird', request_id: 'id\\"x' });
  });

  it("lets the envelope win, once, over arguments that name its fields", () => {
    const line = encodeRequest("hello", "2", { op: "other", request_id: "9", role: "user" });
    expect(line).toBe('{"op":"hello","request_id":"2","role":"user"}');
  });

  it("reads back as the same object for arguments with a toJSON", () => {
    const at = new Date(0);
    const line = encodeRequest("kv_set", "3", { key: "k", value: { at } });
    expect(JSON.parse(line)).toEqual({
      key: "k",
      value: { at: at.toISOString() },
      op: "kv_set",
      request_id: "3",
    });
  });
});
