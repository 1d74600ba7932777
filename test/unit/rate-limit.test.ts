import { describe, expect, it } from "vitest";
import { RATE_BURST, RATE_PER_S, RateLimit } from "../../src/instance/auth/rate-limit.js";

// The auth routes' per-address limit (contract §1.1: the four routes share
// one rate limit). The table of addresses is bounded, and no flood of other
// (forged) addresses may make it forget one that is limited.

function limiter(addresses = 100) {
  const clock = { now: 0 };
  const rate = new RateLimit({ now: () => clock.now, addresses });
  /** Take until refused; how many were granted. */
  const drain = (ip: string) => {
    let granted = 0;
    while (rate.take(ip) === undefined) granted++;
    return granted;
  };
  return { rate, clock, drain };
}

describe("the auth rate limit", () => {
  it("a limited address stays limited however many other addresses come after it", () => {
    const { rate, clock, drain } = limiter(100);
    expect(drain("198.51.100.9")).toBe(RATE_BURST);
    for (let i = 0; i < 1001; i++) rate.take(`10.0.${i >> 8}.${i & 255}`);
    expect(rate.take("198.51.100.9")).toBe(1);
    // It earns back what the clock gives it, no more.
    clock.now += 5000;
    expect(drain("198.51.100.9")).toBe(5 * RATE_PER_S);
  });

  it("with every remembered address in debt, newcomers share one bucket until some refill", () => {
    const { rate, clock, drain } = limiter(100);
    for (let i = 0; i < 100; i++) expect(rate.take(`10.0.0.${i}`)).toBeUndefined();
    // The table is full of addresses that spent: the next ones are limited together.
    expect(drain("192.0.2.1")).toBe(RATE_BURST);
    expect(rate.take("192.0.2.2")).toBeDefined();
    // Once the first ones have refilled (nothing of theirs to remember),
    // a newcomer has its own bucket again.
    clock.now += 1000;
    expect(drain("192.0.2.3")).toBe(RATE_BURST);
  });
});
