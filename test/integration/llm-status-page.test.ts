import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import type { LlmStatusReport, LlmStatusService } from "../../src/contract/llm.js";
import { FakeStatusPage, operationalSummary, outageSummary } from "../helpers/fake-statuspage.js";
import type { TestInstance } from "../helpers/instance.js";
import { llmInstance } from "../helpers/llm.js";
import { contractViolations, Peer } from "../helpers/peer.js";

// Issue 13 item 4: the provider's official status page in `llm_status`
// (contract §5.4 `official`), polled from a fake Statuspage on loopback, next
// to what a gateway observed.

const TOKEN = "tok-0123456789abcdef";
const SERVICE = "api.anthropic.com";

const report = (f: Pushed) => f.data as LlmStatusReport;
const service = (f: Pushed): LlmStatusService | undefined =>
  report(f).services.find((s) => s.id === SERVICE);

describe("llm_status with a status page", () => {
  let page: FakeStatusPage;
  let inst: TestInstance;
  let person: Peer;
  let snap: Pushed;
  /** The snapshot if it matches, else the next frame that does. */
  const frame = async (pred: (s: LlmStatusService | undefined) => boolean) =>
    pred(service(snap)) ? snap : person.next((f) => f.topic === "llm_status" && pred(service(f)));

  beforeAll(async () => {
    page = await FakeStatusPage.start();
    inst = await llmInstance({
      sources: { ext: { token: TOKEN } },
      status_page: { url: page.url, interval_seconds: 60 },
    });
    person = await Peer.unix(inst.socket);
    await person.helloUser();
    snap = await person.subscribe("llm_status");
  });
  afterAll(async () => {
    person?.close();
    await inst?.stop();
    await page?.close();
    expect(contractViolations.splice(0)).toEqual([]);
  });

  it("shows the page's state and components (groups left out) as official", async () => {
    const f = await frame((s) => s?.official?.state === "operational");
    expect(service(f)).toMatchObject({ severity: "ok", name: SERVICE });
    const official = service(f)!.official!;
    expect(official).toMatchObject({ source: "statuspage", source_url: page.url, incidents: [] });
    expect(official.stale).toBeUndefined();
    expect(official.error).toBeUndefined();
    expect(official.components).toEqual([
      { id: "k8w3r06qmzrp", name: "claude.ai", state: "operational" },
      { id: "0qbwn08sd68x", name: "Claude API (api.anthropic.com)", state: "operational" },
      { id: "yyzkbfz2thpt", name: "Claude Code", state: "operational" },
    ]);
    expect(report(f).overall.severity).toBe("ok");
  });

  it("turns critical on a major outage, with the incident, whatever the traffic shows", async () => {
    // A gateway saw a request answered: observed reachable.
    const ok = await fetch(new URL("webhook/ext", inst.http), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify([{ received_at: Date.now(), status: 200, upstream: SERVICE }]),
    });
    expect(ok.status).toBe(204);
    await frame((s) => s?.observed?.state === "reachable");
    page.summary = outageSummary();
    const polls = page.polls;
    await inst.advanceClock(60_000);
    const f = await frame((s) => s?.official?.state === "major_outage");
    expect(page.polls).toBe(polls + 1);
    const s = service(f)!;
    expect(s.severity).toBe("critical");
    expect(s.observed?.state).toBe("reachable");
    expect(report(f).overall).toMatchObject({
      severity: "critical",
      service_counts: { critical: 1 },
    });
    expect(s.official!.components[1]).toMatchObject({ state: "major_outage" });
    expect(s.official!.incidents).toEqual([
      {
        id: "ct2xq9pl7w0d",
        name: "Elevated errors on the Claude API",
        state: "identified",
        impact: "critical",
        created_at: Date.parse("2026-11-30T09:01:07.310Z"),
        updated_at: Date.parse("2026-11-30T09:12:44.476Z"),
        url: "https://stspg.io/abcd1234",
        latest_update: "The issue has been identified and a fix is being implemented.",
        scope: "Claude API (api.anthropic.com)",
      },
    ]);
  });

  it("keeps the last good reading, marked stale with the error, when a poll fails", async () => {
    page.failWith = 503;
    await inst.advanceClock(60_000);
    const f = await frame((s) => s?.official?.stale === true);
    const s = service(f)!;
    expect(s.official).toMatchObject({ state: "major_outage", stale: true, error: "HTTP 503" });
    expect(s.official!.incidents).toHaveLength(1);
    expect(s.severity).toBe("critical");
    // The page answers again: fresh, no error.
    page.failWith = undefined;
    page.summary = operationalSummary();
    await inst.advanceClock(60_000);
    const back = await frame((x) => x?.official?.state === "operational");
    expect(service(back)!.official!.stale).toBeUndefined();
    expect(service(back)!.official!.error).toBeUndefined();
    expect(service(back)!.severity).toBe("ok");
  });
});

describe("a status page without a webhook source", () => {
  it("offers llm_status alone, and says why when the page cannot be read", async () => {
    const page = await FakeStatusPage.start();
    page.failWith = 500;
    const inst = await llmInstance({ status_page: { url: page.url } });
    const person = await Peer.unix(inst.socket);
    try {
      const hello = (await person.helloUser()) as { capabilities: string[] };
      expect(hello.capabilities).toContain("llm_status");
      expect(hello.capabilities).not.toContain("llm_events");
      const snap = await person.subscribe("llm_status");
      const f =
        service(snap)?.official !== undefined
          ? snap
          : await person.next((x) => x.topic === "llm_status" && service(x) !== undefined);
      expect(service(f)).toMatchObject({
        severity: "unknown",
        official: { state: "unknown", error: "HTTP 500", components: [], incidents: [] },
      });
      expect(service(f)!.official!.stale).toBeUndefined();
      expect(service(f)!.observed).toBeUndefined();
    } finally {
      person.close();
      await inst.stop();
      await page.close();
    }
    expect(contractViolations.splice(0)).toEqual([]);
  });
});
