import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { fetchOfficial, officialOf, summaryUrl } from "../../src/instance/llm/status-page.js";
import { operationalSummary } from "../helpers/fake-statuspage.js";

// A Statuspage summary in the contract's words (§5.4 `official`).

describe("officialOf", () => {
  it("maps each indicator and component status to the official vocabulary", () => {
    const states = (indicator: string) =>
      officialOf({ ...operationalSummary(), status: { indicator } }, "https://s", 1)?.state;
    expect(["none", "minor", "major", "critical", "maintenance", "new"].map(states)).toEqual([
      "operational",
      "degraded",
      "partial_outage",
      "major_outage",
      "maintenance",
      "unknown",
    ]);
    const summary = {
      status: { indicator: "minor" },
      components: ["degraded_performance", "partial_outage", "under_maintenance", "odd"].map(
        (status, i) => ({ id: `c${i}`, name: `C${i}`, status, group: false }),
      ),
    };
    expect(officialOf(summary, "https://s", 1)?.components.map((c) => c.state)).toEqual([
      "degraded",
      "partial_outage",
      "maintenance",
      "unknown",
    ]);
  });

  it("lists maintenances in progress beside incidents, and no scheduled ones", () => {
    const official = officialOf(
      {
        ...operationalSummary(),
        status: { indicator: "maintenance" },
        scheduled_maintenances: [
          { id: "m1", name: "Database upgrade", status: "in_progress", impact: "maintenance" },
          { id: "m2", name: "Next week", status: "scheduled", impact: "maintenance" },
        ],
      },
      "https://s",
      7,
    );
    expect(official?.incidents).toEqual([
      { id: "m1", name: "Database upgrade", state: "in_progress", impact: "maintenance" },
    ]);
    expect(official?.observed_at).toBe(7);
  });

  it("refuses a body that is no summary", () => {
    expect(officialOf({ page: {} }, "https://s", 1)).toBeUndefined();
    expect(officialOf([], "https://s", 1)).toBeUndefined();
    expect(officialOf({ status: { indicator: "" } }, "https://s", 1)).toBeUndefined();
  });

  it("reads the summary under the page's base", () => {
    expect(summaryUrl("https://status.anthropic.com/")).toBe(
      "https://status.anthropic.com/api/v2/summary.json",
    );
  });
});

describe("fetchOfficial", () => {
  it("says why a page gave no summary: too large, not JSON, not a summary", async () => {
    let body = "";
    const server = createServer((_req, res) => {
      // Chunked, no content-length: the limit is on what is read.
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < body.length; i += 65_536) res.write(body.slice(i, i + 65_536));
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      body = `[${" ".repeat(1024 * 1024)}]`;
      expect(await fetchOfficial(url, () => 1)).toEqual({ error: "summary too large" });
      body = "<html>";
      expect(await fetchOfficial(url, () => 1)).toEqual({ error: "summary is not JSON" });
      body = "{}";
      expect(await fetchOfficial(url, () => 1)).toEqual({ error: "not a Statuspage summary" });
      body = JSON.stringify(operationalSummary());
      expect(await fetchOfficial(url, () => 5)).toMatchObject({
        ok: { state: "operational", observed_at: 5 },
      });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("gives up on a page that does not answer in time", async () => {
    const server = createServer(() => {});
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await fetchOfficial(url, () => 1, undefined, 200)).toEqual({ error: "timed out" });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("reports an address nobody answers on", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const r = await fetchOfficial(`http://127.0.0.1:${port}`, () => 1);
    expect(r).toEqual({ error: expect.stringContaining("ECONNREFUSED") });
  });
});
