import { checksState } from "../../contract/ecc/merge-queue.js";
import { type ContractError, contractError } from "../../contract/errors.js";
import { ghSync } from "../../probes/github.js";
import { mapLimited } from "../../util/map-limited.js";
import type { SyncResult } from "./apply.js";
import type { SyncedItem } from "./merge.js";

// `ccmsg board sync github` (ECC's `work-items sync-github`, ecc-surfaces
// §2.7): the repository's open PRs and issues become work items, recently
// closed PRs end theirs, open items missing from the lists are closed only
// once `gh <kind> view` confirms it. Everything is read first; nothing is
// written until the whole picture is in hand (apply.ts writes it at once).

/** ECC's marker on the rows its sync writes; ours writes the same so either
 * tool recognises the other's rows. */
export const GITHUB_SYNCED_BY = "ecc-work-items-sync-github";

/** gh answers list calls in a few seconds; a whole sync may take a minute. */
const GH_TIMEOUT_MS = 60_000;
const OPEN_LIMIT = 500;
const CLOSED_LIMIT = 50;
/** Closed-unmerged PRs compared with their base per run (one API call each). */
const SALVAGE_CANDIDATES = 10;
/** Vanished items confirmed with `gh … view` per run; the rest wait. */
const MAX_VIEWS = 25;
const PARALLEL = 4;

const PR_FIELDS =
  "number,title,url,state,isDraft,mergeStateStatus,reviewDecision,statusCheckRollup,headRefName,baseRefName,updatedAt,assignees,author";
const ISSUE_FIELDS = "number,title,url,state,updatedAt,assignees,author,labels";
const CLOSED_FIELDS =
  "number,title,url,state,mergedAt,closedAt,headRefName,headRefOid,baseRefName,updatedAt,assignees,author";
const DISCUSSIONS_QUERY =
  "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { discussions(states: OPEN) { totalCount } } }";

/** A closed PR whose head commits never reached its base. */
export interface SalvagePullRequest {
  sourcePullRequest: number;
  status: "stale";
  title: string;
  url: string | null;
  headRefName: string | null;
  /** Commits on the PR's head its base lacks (GitHub's compare `ahead_by`). */
  aheadBy: number;
  closedAt: string | null;
}

/** What the HUD reads from the last GitHub sync. */
export interface GithubSyncFacts {
  repo: string;
  openPullRequests: number;
  openIssues: number;
  /** null when the GraphQL count failed (the sync still ran). */
  openDiscussions: number | null;
  /** PR number by head branch (open first, then merged), for the HUD's
   * `sync.GitHub.latestPullRequest` of a worktree's branch. */
  pullRequestsByBranch: Record<string, number>;
  staleSalvage: SalvagePullRequest[];
}

/** An open item of this repository already on the board. */
export interface BoardGithubItem {
  id: string;
  type: "pr" | "issue";
  number: number;
}

export interface GithubSyncOptions {
  repo?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The board's open items of a repository that a GitHub sync wrote. */
  openOnBoard(repo: string): Promise<BoardGithubItem[]> | BoardGithubItem[];
  progress(stage: string): void;
}

type Json = Record<string, unknown>;

/** A failed step: the whole sync fails with this message. */
function failed(msg: string): ContractError {
  return contractError("internal_error", msg);
}

/** `gh <args>` (or `node $ECC_GH_SHIM <args>`), parsed as JSON. */
async function ghJson(o: GithubSyncOptions, args: string[]): Promise<unknown> {
  const r = await ghSync(o.cwd, args, o.env, GH_TIMEOUT_MS);
  const what = `gh ${args.slice(0, 2).join(" ")}`;
  if (r.failure === "missing") throw failed("gh is not installed (or ECC_GH_SHIM names nothing)");
  if (r.failure === "timeout") throw failed(`${what} took longer than ${GH_TIMEOUT_MS / 1000} s`);
  if (!r.ok) {
    const line = r.stderr.split("\n").find((l) => l.trim() !== "") ?? `exit ${r.code}`;
    throw failed(`${what} failed: ${line.trim().slice(0, 300)}`);
  }
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw failed(`${what} did not answer JSON`);
  }
}

function list(v: unknown, what: string): Json[] {
  if (!Array.isArray(v)) throw failed(`${what}: expected a JSON array`);
  return v.filter((x): x is Json => typeof x === "object" && x !== null);
}

const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** The repository: given, or the one gh infers from the working directory. */
async function resolveRepo(o: GithubSyncOptions): Promise<string> {
  if (o.repo !== undefined) {
    if (!REPO.test(o.repo)) throw contractError("invalid_args", `not owner/name: ${o.repo}`);
    return o.repo;
  }
  const v = (await ghJson(o, ["repo", "view", "--json", "nameWithOwner"])) as Json;
  if (typeof v?.nameWithOwner !== "string" || !REPO.test(v.nameWithOwner))
    throw failed("gh repo view did not name the repository");
  return v.nameWithOwner;
}

/** `owner/name` → `owner-name`, the id part ECC uses. */
export function repoSlug(repo: string): string {
  return repo
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

function logins(v: unknown): string[] {
  return Array.isArray(v)
    ? v.flatMap((a) => (typeof a?.login === "string" && a.login !== "" ? [a.login] : []))
    : [];
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

/** The item of an open or closed PR. */
function prItem(repo: string, pr: Json): SyncedItem {
  const state = String(pr.state ?? "OPEN").toUpperCase();
  const blocked = pr.isDraft === true || pr.mergeStateStatus === "DIRTY";
  const assignees = logins(pr.assignees);
  const status =
    state === "MERGED"
      ? "done"
      : state === "CLOSED"
        ? "closed"
        : blocked
          ? "blocked"
          : "needs-review";
  const metadata: Json = {
    repo,
    type: "pr",
    number: pr.number,
    state,
    headRefName: str(pr.headRefName),
    baseRefName: str(pr.baseRefName),
    sourceUpdatedAt: str(pr.updatedAt),
    authorLogin: str((pr.author as Json | null)?.login),
    assignees,
    syncedBy: GITHUB_SYNCED_BY,
  };
  if (state === "OPEN") {
    metadata.mergeStateStatus = str(pr.mergeStateStatus);
    metadata.isDraft = pr.isDraft === true;
    metadata.reviewDecision = str(pr.reviewDecision);
    metadata.checks = checksState(pr.statusCheckRollup);
  } else {
    metadata.mergedAt = str(pr.mergedAt);
    metadata.closedAt = str(pr.closedAt);
  }
  return {
    id: `github-${repoSlug(repo)}-pr-${pr.number}`,
    source: "github",
    sourceId: `${repo}#${pr.number}`,
    title: str(pr.title) ?? `#${pr.number}`,
    status,
    priority: status === "blocked" ? "high" : "normal",
    url: str(pr.url),
    owner: assignees[0] ?? null,
    metadata,
  };
}

function issueItem(repo: string, issue: Json): SyncedItem {
  const assignees = logins(issue.assignees);
  return {
    id: `github-${repoSlug(repo)}-issue-${issue.number}`,
    source: "github",
    sourceId: `${repo}#${issue.number}`,
    title: str(issue.title) ?? `#${issue.number}`,
    status: "needs-review",
    priority: "normal",
    url: str(issue.url),
    owner: assignees[0] ?? null,
    metadata: {
      repo,
      type: "issue",
      number: issue.number,
      state: "OPEN",
      labels: Array.isArray(issue.labels)
        ? issue.labels.flatMap((l) => (typeof l?.name === "string" ? [l.name] : []))
        : [],
      sourceUpdatedAt: str(issue.updatedAt),
      authorLogin: str((issue.author as Json | null)?.login),
      assignees,
      syncedBy: GITHUB_SYNCED_BY,
    },
  };
}

/**
 * Whether a closed PR's head commits reached its base: GitHub's compare of
 * `base...head` counts the head's commits the base lacks (`ahead_by`); the
 * head commit stays reachable through the PR's ref after the branch is gone.
 * Work landed under other commit ids (a squash in another PR) still counts as
 * not landed — the queue asks a person to look, it never deletes anything.
 */
async function salvageOf(
  o: GithubSyncOptions,
  repo: string,
  pr: Json,
): Promise<SalvagePullRequest | undefined> {
  const base = str(pr.baseRefName);
  const head = str(pr.headRefOid);
  if (base === null || head === null) return undefined;
  let cmp: Json;
  try {
    cmp = (await ghJson(o, ["api", `repos/${repo}/compare/${base}...${head}?per_page=1`])) as Json;
  } catch {
    return undefined; // one PR's compare failing costs only its entry
  }
  const ahead = cmp?.ahead_by;
  if (typeof ahead !== "number" || ahead <= 0) return undefined;
  return {
    sourcePullRequest: pr.number as number,
    status: "stale",
    title: str(pr.title) ?? `#${pr.number}`,
    url: str(pr.url),
    headRefName: str(pr.headRefName),
    aheadBy: ahead,
    closedAt: str(pr.closedAt),
  };
}

async function discussionsCount(o: GithubSyncOptions, repo: string): Promise<number | null> {
  const [owner, name] = repo.split("/") as [string, string];
  try {
    const v = (await ghJson(o, [
      "api",
      "graphql",
      "-f",
      `query=${DISCUSSIONS_QUERY}`,
      "-F",
      `owner=${owner}`,
      "-F",
      `name=${name}`,
    ])) as Json;
    const n = (v?.data as Json | undefined)?.repository as Json | undefined;
    const count = (n?.discussions as Json | undefined)?.totalCount;
    return typeof count === "number" && Number.isInteger(count) && count >= 0 ? count : null;
  } catch {
    return null;
  }
}

/** Read everything a GitHub sync writes. Throws (a ContractError) when a list
 * cannot be read: then nothing is written but the failure. */
export async function readGithub(o: GithubSyncOptions): Promise<SyncResult> {
  const startedAt = new Date().toISOString();
  o.progress("resolving the repository");
  const repo = await resolveRepo(o);
  o.progress(`reading ${repo}: open pull requests, issues, recently closed pull requests`);
  // `gh <kind> list` in one state, as JSON with the named fields.
  const ghList = (kind: "pr" | "issue", state: "open" | "closed", limit: number, fields: string) =>
    ghJson(o, [
      kind,
      "list",
      "--repo",
      repo,
      "--state",
      state,
      "--limit",
      `${limit}`,
      "--json",
      fields,
    ]);
  const [prsRaw, issuesRaw, closedRaw, openDiscussions] = await Promise.all([
    ghList("pr", "open", OPEN_LIMIT, PR_FIELDS),
    ghList("issue", "open", OPEN_LIMIT, ISSUE_FIELDS),
    ghList("pr", "closed", CLOSED_LIMIT, CLOSED_FIELDS),
    discussionsCount(o, repo),
  ]);
  const prs = list(prsRaw, "gh pr list");
  const issues = list(issuesRaw, "gh issue list");
  const closedPrs = list(closedRaw, "gh pr list --state closed");
  o.progress(
    `${prs.length} open pull requests, ${issues.length} open issues, ${closedPrs.length} recently closed`,
  );

  const items = [...prs.map((p) => prItem(repo, p)), ...issues.map((i) => issueItem(repo, i))];
  const known = closedPrs.map((p) => prItem(repo, p));
  const listed = new Set([...items, ...known].map((i) => i.id));

  // Open board items the lists no longer show: closed only on gh's word.
  const missing = (await o.openOnBoard(repo)).filter((b) => !listed.has(b.id));
  const closures: SyncResult["closures"] = [];
  const retained: SyncResult["retained"] = [];
  const toView = missing.slice(0, MAX_VIEWS);
  for (const b of missing.slice(MAX_VIEWS))
    retained.push({ id: b.id, reason: `not checked this run (at most ${MAX_VIEWS} per run)` });
  if (toView.length > 0) o.progress(`confirming ${toView.length} items missing from the lists`);
  await mapLimited(toView, PARALLEL, async (b) => {
    const kind = b.type === "pr" ? "pr" : "issue";
    try {
      const v = (await ghJson(o, [
        kind,
        "view",
        `${b.number}`,
        "--repo",
        repo,
        "--json",
        "state",
      ])) as Json;
      const state = String(v?.state ?? "").toUpperCase();
      if (state === "MERGED") closures.push({ id: b.id, status: "done", reason: "merged" });
      else if (state === "CLOSED") closures.push({ id: b.id, status: "closed", reason: "closed" });
      else
        retained.push({
          id: b.id,
          reason: `gh ${kind} view says ${state || "nothing"}: still open, though missing from the list`,
        });
    } catch (error) {
      retained.push({ id: b.id, reason: (error as Error).message });
    }
  });

  const unmerged = closedPrs
    .filter((p) => String(p.state).toUpperCase() === "CLOSED")
    .slice(0, SALVAGE_CANDIDATES);
  if (unmerged.length > 0)
    o.progress(`comparing ${unmerged.length} closed, unmerged pull requests with their base`);
  const salvage = (await mapLimited(unmerged, PARALLEL, (p) => salvageOf(o, repo, p))).filter(
    (s): s is SalvagePullRequest => s !== undefined,
  );

  const pullRequestsByBranch: Record<string, number> = {};
  for (const p of [...closedPrs.filter((c) => c.state === "MERGED"), ...prs]) {
    const branch = str(p.headRefName);
    if (branch !== null && typeof p.number === "number") pullRequestsByBranch[branch] = p.number;
  }
  const facts: GithubSyncFacts = {
    repo,
    openPullRequests: prs.length,
    openIssues: issues.length,
    openDiscussions,
    pullRequestsByBranch,
    staleSalvage: salvage,
  };
  return { source: "github", target: repo, startedAt, items, known, closures, retained, facts };
}
