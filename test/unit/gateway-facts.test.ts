import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { requestFacts, sessionFromUserId } from "../../src/gateway/request-facts.js";
import { bodyFacts, SseObserver } from "../../src/gateway/response-facts.js";
import {
  OUTPUT_TOKENS,
  overloadBody,
  streamChunks,
  USAGE_START,
} from "../helpers/fake-messages-api.js";

// What `ccmsg gateway` reads on the side of the bytes it forwards.

const SID = "bcb04ce4-4ce8-47d0-97c2-9a1eaa7ed49e";

describe("the session of a request", () => {
  it("reads Claude Code 2.1's metadata.user_id (a JSON object) and the older _session_ form", () => {
    // As Claude Code 2.1.328 sent it to a model on loopback.
    const current = JSON.stringify({
      device_id: "2c87305591154fca",
      account_uuid: "",
      session_id: SID,
    });
    expect(sessionFromUserId(current)).toBe(SID);
    expect(sessionFromUserId(`user_abc_account_x_session_${SID}`)).toBe(SID);
    expect(sessionFromUserId(`user_abc_session_${SID.toUpperCase()}`)).toBeUndefined();
    expect(sessionFromUserId('{"session_id":"nope"}')).toBeUndefined();
    expect(sessionFromUserId(42)).toBeUndefined();
  });
});

describe("the series and cache lifetime of a request", () => {
  const system = [
    { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
  ];
  const first = { role: "user", content: [{ type: "text", text: "fix the bug" }] };
  const marked = (m: typeof first) => ({
    ...m,
    content: m.content.map((b) => ({ ...b, cache_control: { type: "ephemeral" } })),
  });

  it("names one conversation the same from turn to turn, however its cache marks move", () => {
    const turn1 = requestFacts({ model: "m", system, messages: [marked(first)] });
    const turn2 = requestFacts({
      model: "m",
      system,
      messages: [
        first,
        { role: "assistant", content: "where?" },
        marked({ ...first, content: [{ type: "text", text: "in x" }] }),
      ],
      metadata: { user_id: JSON.stringify({ session_id: SID }) },
    });
    expect(turn1.prefix).toMatch(/^[0-9a-f]{16}$/);
    expect(turn2.prefix).toBe(turn1.prefix);
    expect(turn2.sid).toBe(SID);
    const agent = requestFacts({ model: "m", system: "You are a sub-agent.", messages: [first] });
    expect(agent.prefix).not.toBe(turn1.prefix);
  });

  it("takes the longest ttl asked for; none without a cache mark", () => {
    expect(requestFacts({ system, messages: [first] }).cache_ttl_secs).toBe(300);
    const hour = [{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "1h" } }];
    expect(requestFacts({ system: hour, messages: [marked(first)] }).cache_ttl_secs).toBe(3600);
    expect(
      requestFacts({
        tools: [{ name: "t", cache_control: { type: "ephemeral", ttl: "1h" } }],
        messages: [first],
      }).cache_ttl_secs,
    ).toBe(3600);
    expect(
      requestFacts({ cache_control: { type: "ephemeral" }, messages: [first] }).cache_ttl_secs,
    ).toBe(300);
    expect(requestFacts({ system: "plain", messages: [first] }).cache_ttl_secs).toBeUndefined();
  });
});

describe("the facts of a response", () => {
  const expected = {
    model: "claude-x",
    usage: { ...USAGE_START, output_tokens: OUTPUT_TOKENS },
  };

  it("reads a stream however it is cut into chunks, and never model text as usage", () => {
    const bytes = Buffer.from(streamChunks("claude-x", { deltas: 3 }).join(""));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }),
        (cuts) => {
          const at = [0, ...cuts.sort((a, b) => a - b), bytes.length];
          const sse = new SseObserver();
          for (let i = 0; i + 1 < at.length; i++) sse.push(bytes.subarray(at[i], at[i + 1]));
          expect(sse.facts).toEqual(expected);
        },
      ),
    );
  });

  it("reads a stream whose events carry no event: names", () => {
    const unnamed = streamChunks("claude-x", { deltas: 2 })
      .map((c) => c.replace(/^event: .*\n/, ""))
      .join("");
    const sse = new SseObserver();
    sse.push(Buffer.from(unnamed));
    expect(sse.facts).toEqual(expected);
  });

  it("reads an error event in a stream and an error body", () => {
    const sse = new SseObserver();
    sse.push(Buffer.from(`event: error\ndata: ${overloadBody()}\n\n`));
    expect(sse.facts.error).toBe("overloaded_error");
    expect(bodyFacts(overloadBody()).error).toBe("overloaded_error");
    expect(bodyFacts("not json")).toEqual({ usage: {} });
  });

  it("skips a line too long to hold without losing the lines after it", () => {
    const sse = new SseObserver();
    sse.push(Buffer.from("data: "));
    for (let i = 0; i < 40; i++) sse.push(Buffer.alloc(10_000, 0x61));
    sse.push(Buffer.from(`\n${streamChunks("claude-x", { deltas: 1 }).join("")}`));
    expect(sse.facts).toEqual(expected);
  });
});
