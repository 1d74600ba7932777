import { describe, expect, it } from "vitest";
import type { LlmEvent } from "../../src/gateway/event.js";
import { LlmQuota } from "../../src/instance/llm/quota.js";
import { LlmStatus } from "../../src/instance/llm/status.js";
import type { TopicHub } from "../../src/instance/topic-hub.js";
import { Clock } from "../../src/util/clock.js";

// What the instance makes of gateway events for llm_status and
// llm_usage_read, on its own clock.

const hub = { invalidate() {} } as unknown as TopicHub;

describe("llm_status from observed traffic", () => {
  it("counts a request once, names its failure from its end, and expires the observation", () => {
    const clock = new Clock(0);
    const status = new LlmStatus(clock, hub);
    const t = clock.now();
    const ev = (over: Partial<LlmEvent>): LlmEvent => ({
      received_at: t,
      upstream: "api",
      ...over,
    });
    status.add([
      ev({ status: 200, prefix: "a" }),
      ev({ status: 200, prefix: "a", completed_at: t + 5 }),
    ]);
    status.add([ev({ status: 529, prefix: "b", received_at: t + 10 })]);
    status.add([
      ev({
        status: 529,
        prefix: "b",
        received_at: t + 10,
        completed_at: t + 11,
        error: "overloaded_error",
      }),
    ]);
    const report = status.value();
    // Two requests, one failed: half, which is critical.
    expect(report.services[0]).toMatchObject({
      id: "api",
      severity: "critical",
      observed: {
        state: "failing",
        last_failure: { at: t + 10, status: 529, kind: "overloaded_error" },
      },
    });
    // A client's own 4xx says nothing of the service.
    status.add([ev({ status: 400, prefix: "c", received_at: t + 20 })]);
    status.add([ev({ status: 200, prefix: "d", received_at: t + 30 })]);
    expect(status.value().services[0]).toMatchObject({
      severity: "warning",
      observed: { state: "reachable", last_success_at: t + 30 },
    });
    clock.advance(5 * 60_000 + 100);
    expect(status.value()).toMatchObject({
      overall: { severity: "unknown" },
      services: [{ severity: "unknown", observed: { state: "unknown" } }],
    });
    status.close();
  });
});

describe("llm_usage_read from rate-limit headers", () => {
  it("keeps the newest reading per credential and marks a window read before its reset", () => {
    const clock = new Clock(0);
    const quota = new LlmQuota();
    const t = clock.now();
    const resetSecs = Math.floor((t + 60_000) / 1000);
    quota.add({
      received_at: t,
      credential: "oauth-0123456789ab",
      ratelimit: {
        "unified-5h-utilization": "1.2",
        "unified-5h-reset": String(resetSecs),
        "unified-status": "rejected",
        "unified-overage-status": "disabled",
        "unified-overage-disabled-reason": "org_level_disabled",
      },
    });
    // An older reading arriving late is not taken.
    quota.add({ received_at: t - 1, credential: "oauth-0123456789ab", ratelimit: {} });
    const [c] = quota.read(false, t).credentials;
    expect(c).toMatchObject({
      type: "oauth",
      snapshot: {
        observed_at: t,
        overage: { status: "disabled", disabled_reason: "org_level_disabled" },
        // Over 1 is a real overrun: never clamped.
        windows: { "5h": { utilization: 1.2, status: "rejected", window_secs: 18_000 } },
      },
    });
    expect(c!.snapshot!.windows["5h"]!.expired).toBeUndefined();
    const later = quota.read(false, t + 120_000).credentials[0]!;
    expect(later.snapshot!.windows["5h"]!.expired).toBe(true);
  });
});
