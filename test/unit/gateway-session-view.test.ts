import { describe, expect, it } from "vitest";
import { busyUntil, isBusy } from "../../src/contract/busy.js";
import { costUsd, priceOf } from "../../src/gateway/prices.js";
import { renderStatusline } from "../../src/harness/claude/statusline.js";
import { cacheLeftMs, type SessionLlm } from "../../src/state/llm-session-file.js";

// How a gateway's report of a session reads: the busy mark, the cache
// countdown, the cost; and how a request is priced.

const NOW = 1_800_000_000_000;
const session = (over: Partial<SessionLlm> = {}): SessionLlm => ({
  sid: "0b1f4a6e-4a5c-4d7e-9f00-1234567890ab",
  gateway_active_at: NOW - 2000,
  in_flight: false,
  cache_expires_at: NOW + 272_000,
  cache_ttl_secs: 300,
  requests: 3,
  tokens: { input: 30, output: 120, cache_creation: 2000, cache_read: 900_000 },
  usd: 1.234,
  written_at: NOW - 1000,
  ...over,
});

describe("a session as a gateway saw it", () => {
  it("is busy while a request is open or just after its last event", () => {
    expect(isBusy(session(), NOW)).toBe(true);
    expect(isBusy(session({ gateway_active_at: NOW - 60_000 }), NOW)).toBe(false);
    expect(isBusy(session({ gateway_active_at: NOW - 60_000, in_flight: true }), NOW)).toBe(true);
    // An open request whose end never came stops counting after ten minutes.
    expect(isBusy(session({ gateway_active_at: NOW - 700_000, in_flight: true }), NOW)).toBe(false);
    expect(isBusy(session({ gateway_active_at: undefined }), NOW)).toBe(false);
  });

  it("says when its busy mark runs out, so a reader that shows it redraws then", () => {
    // A peers row knows only the instant: 15 s after it.
    expect(busyUntil({ gateway_active_at: NOW - 2000 }, NOW)).toBe(NOW + 13_000);
    expect(busyUntil({ gateway_active_at: NOW - 15_000 }, NOW)).toBeUndefined();
    // An open request, ten minutes after it was last seen.
    expect(busyUntil(session({ gateway_active_at: NOW - 60_000, in_flight: true }), NOW)).toBe(
      NOW + 540_000,
    );
  });

  it("counts its cache window down to nothing", () => {
    expect(cacheLeftMs(session(), NOW)).toBe(272_000);
    expect(cacheLeftMs(session(), NOW + 272_000)).toBeUndefined();
    expect(cacheLeftMs(session({ cache_expires_at: undefined }), NOW)).toBeUndefined();
  });

  it("puts the busy mark, the gateway's cost and tokens, and the countdown on the status line", () => {
    const input = { model: "Opus", costUsd: 9.99 };
    const line = renderStatusline(input, undefined, false, undefined, {
      session: session(),
      now: NOW,
    });
    expect(line).toBe("● │ Opus │ $1.23 902ktok │ cache 4m");
    const idle = renderStatusline(input, undefined, false, undefined, {
      session: session({ gateway_active_at: NOW - 60_000, cache_expires_at: NOW - 1 }),
      now: NOW,
    });
    expect(idle).toBe("Opus │ $1.23 902ktok");
    // Without a gateway's report the harness's own cost stands.
    expect(renderStatusline(input, undefined, false)).toBe("Opus │ $9.99");
  });
});

describe("pricing", () => {
  it("takes the longest matching prefix and prices cache writes by their lifetime", () => {
    expect(priceOf("claude-opus-4-1-20250805")).toEqual({ input: 15, output: 75 });
    expect(priceOf("claude-opus-4-5-20251101")).toEqual({ input: 5, output: 25 });
    expect(priceOf("gpt-x")).toBeUndefined();
    const usage = {
      input_tokens: 1e6,
      output_tokens: 1e6,
      cache_creation_input_tokens: 1e6,
      cache_read_input_tokens: 1e6,
    };
    const price = { input: 3, output: 15 };
    expect(costUsd(usage, price, 300)).toBeCloseTo(3 + 15 + 3.75 + 0.3, 9);
    expect(costUsd(usage, price, 3600)).toBeCloseTo(3 + 15 + 6 + 0.3, 9);
    expect(costUsd(usage, { ...price, cache_read: 1 }, 300)).toBeCloseTo(3 + 15 + 3.75 + 1, 9);
  });
});
