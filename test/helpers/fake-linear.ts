import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for Linear's GraphQL endpoint on 127.0.0.1: answers the two
// queries ccmsg sends (find a project by name; a project with a page of its
// issues) in Linear's response shapes, refuses a wrong API key with 401 and
// Linear's authentication error, and answers an unknown project with a
// GraphQL `errors` list. `issueCreate` adds an issue to the project's first
// team, or — once the workspace holds `issueLimit` issues — answers with
// Linear's usage-limit refusal (test/fixtures/linear).

export interface FakeLinearIssue {
  id: string;
  identifier: string;
  title: string;
  url: string;
  priority: number;
  updatedAt: string;
  state: { name: string; type: string };
  assignee: { name: string; displayName: string } | null;
}

export interface FakeLinearProject {
  id: string;
  name: string;
  url: string;
  health: string | null;
  lastUpdate: { id: string; createdAt: string; health: string } | null;
  issues: FakeLinearIssue[];
  /** Default: one team, WID. */
  teams?: { id: string; key: string }[];
}

export interface FakeLinearOptions {
  /** The workspace's issue capacity (a free plan's): `issueCreate` is
   * refused once every project together holds this many. */
  issueLimit?: number;
}

/** Linear's refusal of `issueCreate` on a workspace at its plan's limit. */
export const USAGE_LIMIT_REFUSAL = JSON.parse(
  readFileSync(
    new URL("../fixtures/linear/issue-create-usage-limit.json", import.meta.url),
    "utf8",
  ),
) as { errors: { extensions: { userPresentableMessage: string } }[] };

export interface FakeLinear {
  url: string;
  /** Each request's headers and body, in order. */
  requests: {
    headers: IncomingHttpHeaders;
    body: { query: string; variables?: Record<string, unknown> };
  }[];
  close(): Promise<void>;
}

const AUTH_ERROR = {
  errors: [
    {
      message: "Authentication required, not authenticated",
      extensions: {
        type: "authentication error",
        code: "AUTHENTICATION_ERROR",
        statusCode: 401,
        userError: true,
        userPresentableMessage: "You need to authenticate to access this operation.",
      },
    },
  ],
};

export async function fakeLinear(
  token: string,
  projects: FakeLinearProject[],
  options: FakeLinearOptions = {},
): Promise<FakeLinear> {
  const teamsOf = (p: FakeLinearProject) => p.teams ?? [{ id: "team-wid", key: "WID" }];
  const requests: FakeLinear["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify(body));
      };
      let body: FakeLinear["requests"][number]["body"];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return send(400, { errors: [{ message: "POST body sent invalid JSON." }] });
      }
      requests.push({ headers: req.headers, body });
      if (req.method !== "POST") return send(405, { errors: [{ message: "Method not allowed" }] });
      if (req.headers.authorization !== token) return send(401, AUTH_ERROR);
      const v = body.variables ?? {};
      if (/\bissueCreate\s*\(/.test(body.query)) {
        const input = (v.input ?? {}) as { teamId?: string; projectId?: string; title?: string };
        const p = projects.find((x) => x.id === input.projectId);
        const team = p === undefined ? undefined : teamsOf(p).find((t) => t.id === input.teamId);
        if (p === undefined || team === undefined || !input.title)
          return send(200, {
            errors: [
              {
                message: "Argument Validation Error",
                extensions: { type: "invalid input", code: "INPUT_ERROR" },
              },
            ],
            data: null,
          });
        const held = projects.reduce((n, x) => n + x.issues.length, 0);
        if (options.issueLimit !== undefined && held >= options.issueLimit)
          return send(200, USAGE_LIMIT_REFUSAL);
        const number = 100 + held;
        const identifier = `${team.key}-${number}`;
        const issue: FakeLinearIssue = {
          id: `issue-${number}`,
          identifier,
          title: input.title,
          url: `https://linear.app/acme/issue/${identifier}`,
          priority: 0,
          updatedAt: new Date().toISOString(),
          state: { name: "Backlog", type: "backlog" },
          assignee: null,
        };
        p.issues.push(issue);
        return send(200, {
          data: {
            issueCreate: { success: true, issue: { id: issue.id, identifier, url: issue.url } },
          },
        });
      }
      if (/\bprojects\s*\(/.test(body.query)) {
        const name = String(v.name ?? "").toLowerCase();
        const nodes = projects
          .filter((p) => p.name.toLowerCase() === name)
          .map((p) => ({ id: p.id, name: p.name }));
        return send(200, { data: { projects: { nodes } } });
      }
      if (/\bproject\s*\(/.test(body.query)) {
        const p = projects.find((x) => x.id === v.id);
        if (p === undefined)
          return send(200, {
            errors: [
              {
                message: "Entity not found: Project",
                path: ["project"],
                locations: [{ line: 2, column: 3 }],
                extensions: {
                  type: "invalid input",
                  code: "INPUT_ERROR",
                  statusCode: 400,
                  userError: true,
                  userPresentableMessage: "Could not find referenced Project.",
                },
              },
            ],
            data: null,
          });
        const first = Number(/issues\(first:\s*(\d+)/.exec(body.query)?.[1] ?? 50);
        const start = typeof v.after === "string" ? Number(v.after) : 0;
        const page = p.issues.slice(start, start + first);
        const end = start + page.length;
        return send(200, {
          data: {
            project: {
              id: p.id,
              name: p.name,
              url: p.url,
              health: p.health,
              lastUpdate: p.lastUpdate,
              teams: { nodes: teamsOf(p) },
              issues: {
                nodes: page,
                pageInfo: { hasNextPage: end < p.issues.length, endCursor: String(end) },
              },
            },
          },
        });
      }
      return send(400, { errors: [{ message: "Cannot query field on type Query." }] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
