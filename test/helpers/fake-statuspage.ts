import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// An Atlassian Statuspage on loopback: `GET /api/v2/summary.json` answers
// the current summary (the shape status.anthropic.com serves: page, status
// indicator, components with a group, incidents with their updates,
// scheduled maintenances), or fails with the status asked for.

export class FakeStatusPage {
  /** What the next polls are answered with. */
  summary: unknown = operationalSummary();
  /** When set, polls answer this HTTP status and no summary. */
  failWith: number | undefined;
  /** Polls served so far. */
  polls = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeStatusPage> {
    let page!: FakeStatusPage;
    const server = createServer((req, res) => {
      if (req.method !== "GET" || req.url !== "/api/v2/summary.json") {
        res.writeHead(404).end();
        return;
      }
      page.polls++;
      if (page.failWith !== undefined) {
        res.writeHead(page.failWith, { "content-type": "text/html" }).end("<h1>unavailable</h1>");
        return;
      }
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(page.summary));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    page = new FakeStatusPage(server, `http://127.0.0.1:${port}`);
    return page;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const PAGE = {
  id: "tymt9n04zgry",
  name: "Anthropic",
  url: "https://status.anthropic.com",
  time_zone: "Etc/UTC",
  updated_at: "2026-11-30T09:12:44.512Z",
};

function component(
  id: string,
  name: string,
  status: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    name,
    status,
    created_at: "2023-07-11T17:36:35.081Z",
    updated_at: "2026-11-30T09:12:44.476Z",
    position: 1,
    description: null,
    showcase: false,
    start_date: null,
    group_id: null,
    page_id: PAGE.id,
    group: false,
    only_show_if_degraded: false,
    ...extra,
  };
}

/** Everything up: indicator `none`, one group holding the API. */
export function operationalSummary(): Record<string, unknown> {
  return {
    page: PAGE,
    components: [
      component("k8w3r06qmzrp", "claude.ai", "operational"),
      component("0qbwn08sd68x", "Claude API (api.anthropic.com)", "operational", {
        group_id: "y7k3d5vqbq2n",
      }),
      component("y7k3d5vqbq2n", "Developer platform", "operational", {
        group: true,
        components: ["0qbwn08sd68x"],
      }),
      component("yyzkbfz2thpt", "Claude Code", "operational"),
    ],
    incidents: [],
    scheduled_maintenances: [],
    status: { indicator: "none", description: "All Systems Operational" },
  };
}

/** The API down with an open incident, two updates (newest first). */
export function outageSummary(): Record<string, unknown> {
  const base = operationalSummary();
  const components = (base.components as Record<string, unknown>[]).map((c) =>
    c.id === "0qbwn08sd68x" ? { ...c, status: "major_outage" } : c,
  );
  return {
    ...base,
    components,
    incidents: [
      {
        id: "ct2xq9pl7w0d",
        name: "Elevated errors on the Claude API",
        status: "identified",
        created_at: "2026-11-30T09:01:07.310Z",
        updated_at: "2026-11-30T09:12:44.476Z",
        monitoring_at: null,
        resolved_at: null,
        impact: "critical",
        shortlink: "https://stspg.io/abcd1234",
        started_at: "2026-11-30T09:01:07.303Z",
        page_id: PAGE.id,
        incident_updates: [
          {
            id: "u2",
            status: "identified",
            body: "The issue has been identified and a fix is being implemented.",
            incident_id: "ct2xq9pl7w0d",
            created_at: "2026-11-30T09:12:44.470Z",
            updated_at: "2026-11-30T09:12:44.470Z",
            display_at: "2026-11-30T09:12:44.470Z",
            affected_components: null,
            deliver_notifications: true,
          },
          {
            id: "u1",
            status: "investigating",
            body: "We are investigating elevated error rates.",
            incident_id: "ct2xq9pl7w0d",
            created_at: "2026-11-30T09:01:07.378Z",
            updated_at: "2026-11-30T09:01:07.378Z",
            display_at: "2026-11-30T09:01:07.378Z",
            affected_components: null,
            deliver_notifications: true,
          },
        ],
        components: [components[1]],
      },
    ],
    status: { indicator: "critical", description: "Major System Outage" },
  };
}
