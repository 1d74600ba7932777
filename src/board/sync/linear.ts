import { ContractError, contractError } from "../../contract/errors.js";
import type { SyncResult } from "./apply.js";
import type { SyncedItem } from "./merge.js";

// `ccmsg board sync linear`: one Linear project read through Linear's GraphQL
// API — its health, its latest project update, its issues as work items —
// and, with `--create`, one issue created in it first. A personal API key is
// sent as the `Authorization` header (no "Bearer").

export const LINEAR_ENDPOINT = "https://api.linear.app/graphql";
export const LINEAR_TOKEN_ENV = "LINEAR_API_KEY";
export const LINEAR_SYNCED_BY = "ccmsg-board-sync-linear";

const TIMEOUT_MS = 30_000;
const PAGE = 100;
/** Pages of issues read per run (500 issues). */
const MAX_PAGES = 5;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const FIND_PROJECT = `query FindProject($name: String!) {
  projects(first: 2, filter: { name: { eqIgnoreCase: $name } }) { nodes { id name } }
}`;

const PROJECT = `query ProjectIssues($id: String!, $after: String) {
  project(id: $id) {
    id name url health
    lastUpdate { id createdAt health }
    issues(first: ${PAGE}, after: $after) {
      nodes {
        id identifier title url priority updatedAt
        state { name type }
        assignee { name displayName }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

const PROJECT_TEAM = `query ProjectTeam($id: String!) {
  project(id: $id) { id name teams(first: 1) { nodes { id key } } }
}`;

const CREATE_ISSUE = `mutation CreateIssue($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { id identifier url } }
}`;

/** Linear's error type for a refusal on the workspace's plan limits (the
 * SDK's `LinearErrorType.UsageLimitExceeded`, linear/linear
 * packages/sdk/src/error.ts), and the code beside it. */
export const LINEAR_USAGE_LIMIT_TYPE = "usage limit exceeded";
export const LINEAR_USAGE_LIMIT_CODE = "USAGE_LIMIT_EXCEEDED";

/** The last issue creation a sync asked of Linear, and what it answered. */
export interface LinearCreateOutcome {
  at: string;
  /** `created`, or `capacity-blocked` when Linear refused for the
   * workspace's usage limit. */
  outcome: "created" | "capacity-blocked";
  identifier: string | null;
  /** What Linear said, when it refused. */
  message: string | null;
}

/** What the HUD reads from the last Linear sync (`sync.Linear`). */
export interface LinearSyncFacts {
  project: string;
  projectId: string;
  /** `onTrack` / `atRisk` / `offTrack`, or null when never set. */
  health: string | null;
  latestStatusUpdateId: string | null;
  /** From the last issue creation (this run's or an earlier one's): true
   * when Linear refused it for workspace capacity, false once one was
   * created; null while no sync ever created one — reading says nothing of
   * capacity (DR-0066). */
  issueCapacityBlocked: boolean | null;
  lastCreate: LinearCreateOutcome | null;
  issueCount: number;
}

export interface LinearSyncOptions {
  project: string;
  endpoint?: string;
  tokenEnv?: string;
  env: NodeJS.ProcessEnv;
  progress(stage: string): void;
  /** The board's open items a Linear sync wrote for a project (by id). */
  openOnBoard(projectId: string): Promise<string[]> | string[];
  /** An issue to create in the project before it is read. */
  create?: { title: string; description?: string };
  /** The last creation an earlier sync recorded: capacity carries over runs
   * that create nothing. */
  lastCreate?: LinearCreateOutcome | null;
}

type Json = Record<string, unknown>;

function failed(msg: string): ContractError {
  return contractError("internal_error", msg);
}

/** Linear refused (HTTP or GraphQL `errors`): a failed sync like any other,
 * carrying each error's `extensions` type and code for the callers that tell
 * refusals apart. */
class LinearRefusal extends ContractError {
  constructor(
    message: string,
    readonly kinds: { type: string | null; code: string | null; message: string | null }[],
  ) {
    super("internal_error", message);
  }

  /** Refused for the workspace's plan limit (a free workspace's issues). */
  get usageLimit(): boolean {
    return this.kinds.some(
      (k) => k.type === LINEAR_USAGE_LIMIT_TYPE || k.code === LINEAR_USAGE_LIMIT_CODE,
    );
  }
}

/** One GraphQL request; HTTP failures and GraphQL `errors` throw (the
 * latter as a LinearRefusal). The token never appears in a message. */
async function graphql(
  endpoint: string,
  token: string,
  query: string,
  variables: Json,
): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: token },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw failed(
      `cannot reach Linear at ${endpoint}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
  const text = await res.text().catch(() => "");
  let body: Json | undefined;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    body = undefined;
  }
  const errors = Array.isArray(body?.errors) ? (body!.errors as Json[]) : [];
  const first = errors
    .map((e) => (typeof e?.message === "string" ? e.message : ""))
    .find((m) => m !== "");
  const kinds = errors.map((e) => {
    const ext = (
      typeof e?.extensions === "object" && e.extensions !== null ? e.extensions : {}
    ) as Json;
    return {
      type: str(ext.type),
      code: str(ext.code),
      message: str(ext.userPresentableMessage) ?? str(e?.message),
    };
  });
  if (!res.ok)
    throw new LinearRefusal(
      `Linear answered HTTP ${res.status}${first ? `: ${first}` : ""}${res.status === 401 ? " (check the API key)" : ""}`,
      kinds,
    );
  if (errors.length > 0)
    throw new LinearRefusal(`Linear GraphQL error: ${first ?? "unnamed error"}`, kinds);
  if (body === undefined || typeof body.data !== "object" || body.data === null)
    throw failed("Linear answered without data");
  return body.data as Json;
}

/** Linear's workflow state → a board status (its lane follows §4.1). */
export function linearStatus(state: { name?: unknown; type?: unknown } | null): string {
  const type = typeof state?.type === "string" ? state.type : "";
  const name = typeof state?.name === "string" ? state.name.toLowerCase() : "";
  if (type === "completed") return "done";
  if (type === "canceled") return "cancelled";
  if (/block/.test(name)) return "blocked";
  if (type === "started") return /review/.test(name) ? "needs-review" : "in-progress";
  return "open"; // triage, backlog, unstarted
}

/** Linear's priority number → the board's priority words. */
export function linearPriority(p: unknown): string | null {
  switch (p) {
    case 1:
      return "urgent";
    case 2:
      return "high";
    case 3:
      return "medium";
    case 4:
      return "low";
    default:
      return null; // 0: no priority
  }
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

function issueItem(project: { id: string; name: string }, n: Json): SyncedItem | undefined {
  const identifier = str(n.identifier);
  const title = str(n.title);
  if (identifier === null || title === null) return undefined;
  const state = (n.state as Json | null) ?? null;
  const assignee = (n.assignee as Json | null) ?? null;
  return {
    id: `linear-${identifier}`,
    source: "linear",
    sourceId: str(n.id),
    title,
    status: linearStatus(state),
    priority: linearPriority(n.priority),
    url: str(n.url),
    owner: str(assignee?.displayName) ?? str(assignee?.name),
    metadata: {
      project: project.name,
      projectId: project.id,
      identifier,
      stateName: str(state?.name),
      stateType: str(state?.type),
      linearPriority: typeof n.priority === "number" ? n.priority : null,
      sourceUpdatedAt: str(n.updatedAt),
      syncedBy: LINEAR_SYNCED_BY,
    },
  };
}

/** Create one issue in the project (in its first team). A refusal for the
 * workspace's usage limit is an outcome, not a failure: the sync goes on and
 * records it. Any other refusal fails the sync. */
async function createIssue(
  endpoint: string,
  token: string,
  projectId: string,
  issue: { title: string; description?: string },
  progress: (stage: string) => void,
): Promise<LinearCreateOutcome> {
  progress(`creating issue "${issue.title}"`);
  const data = await graphql(endpoint, token, PROJECT_TEAM, { id: projectId });
  const p = data.project as Json | null;
  const team = (((p?.teams as Json | undefined)?.nodes ?? []) as Json[])[0];
  if (p == null) throw failed(`no Linear project with id ${projectId}`);
  if (team === undefined)
    throw failed(`the Linear project ${String(p.name)} has no team to create issues in`);
  const input: Json = { teamId: String(team.id), projectId, title: issue.title };
  if (issue.description !== undefined) input.description = issue.description;
  const at = new Date().toISOString();
  try {
    const made = await graphql(endpoint, token, CREATE_ISSUE, { input });
    const payload = made.issueCreate as Json | null;
    if (payload?.success !== true) throw failed("Linear did not create the issue (success: false)");
    const identifier = str((payload.issue as Json | null)?.identifier);
    return { at, outcome: "created", identifier, message: null };
  } catch (error) {
    if (error instanceof LinearRefusal && error.usageLimit) {
      const said = error.kinds.find((k) => k.message !== null)?.message ?? error.message;
      progress(`Linear refused the issue: ${said}`);
      return { at, outcome: "capacity-blocked", identifier: null, message: said };
    }
    throw error;
  }
}

/** Read everything a Linear sync writes. */
export async function readLinear(o: LinearSyncOptions): Promise<SyncResult> {
  const startedAt = new Date().toISOString();
  const tokenEnv = o.tokenEnv ?? LINEAR_TOKEN_ENV;
  const token = o.env[tokenEnv];
  if (token === undefined || token.trim() === "")
    throw contractError("invalid_args", `no Linear API key: ${tokenEnv} is not set`);
  const endpoint = o.endpoint ?? LINEAR_ENDPOINT;
  let id = o.project;
  if (!UUID.test(o.project)) {
    o.progress(`finding project "${o.project}"`);
    const data = await graphql(endpoint, token, FIND_PROJECT, { name: o.project });
    const nodes = ((data.projects as Json | undefined)?.nodes ?? []) as Json[];
    if (nodes.length === 0) throw failed(`no Linear project named "${o.project}"`);
    if (nodes.length > 1)
      throw failed(`more than one Linear project named "${o.project}"; give its id`);
    id = String(nodes[0]!.id);
  }
  const lastCreate =
    o.create === undefined
      ? (o.lastCreate ?? null)
      : await createIssue(endpoint, token, id, o.create, o.progress);
  const items: SyncedItem[] = [];
  let project: Json | undefined;
  let after: string | null = null;
  let complete = false;
  for (let page = 0; page < MAX_PAGES; page++) {
    o.progress(`reading the project's issues (page ${page + 1})`);
    const data = await graphql(endpoint, token, PROJECT, { id, after });
    const p = data.project as Json | null;
    if (p === null || typeof p !== "object") throw failed(`no Linear project with id ${id}`);
    project ??= p;
    const named = { id: String(project.id), name: String(project.name) };
    const conn = (p.issues ?? {}) as Json;
    for (const n of (conn.nodes ?? []) as Json[]) {
      const item = issueItem(named, n);
      if (item !== undefined) items.push(item);
    }
    const info = (conn.pageInfo ?? {}) as Json;
    if (info.hasNextPage !== true || typeof info.endCursor !== "string") {
      complete = true;
      break;
    }
    after = info.endCursor;
  }
  const p = project!;
  const lastUpdate = (p.lastUpdate as Json | null) ?? null;
  const facts: LinearSyncFacts = {
    project: String(p.name),
    projectId: String(p.id),
    health: str(p.health) ?? str(lastUpdate?.health),
    latestStatusUpdateId: str(lastUpdate?.id),
    issueCapacityBlocked: lastCreate === null ? null : lastCreate.outcome === "capacity-blocked",
    lastCreate,
    issueCount: items.length,
  };
  o.progress(`${items.length} issues in ${facts.project}`);
  // Items of the project Linear no longer lists are left as they were: an
  // issue moved to another project or deleted is not work finished.
  const listed = new Set(items.map((i) => i.id));
  const retained = (await o.openOnBoard(facts.projectId))
    .filter((id) => !listed.has(id))
    .map((id) => ({
      id,
      reason: complete
        ? "no longer in the project (moved, archived or deleted in Linear); left as it was"
        : `not among the first ${MAX_PAGES * PAGE} issues read`,
    }));
  return {
    source: "linear",
    target: facts.project,
    startedAt,
    items,
    known: [],
    closures: [],
    retained,
    facts,
  };
}
