import { onPath, type RunResult, run } from "./exec.js";

// What GitHub says, through the `gh` CLI when it is installed and signed in.
// Calls are independent and run in parallel; each failure only blanks its own
// signal. The repository is the one gh infers from the worktree's remotes.

export type GhState = "ok" | "not-installed" | "not-authenticated";

export function ghUnavailableReason(state: Exclude<GhState, "ok">): string {
  return state === "not-installed" ? "gh not installed" : "gh not authenticated";
}

/** gh never prompts, never checks for updates, never colours its output. */
function ghEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GH_PROMPT_DISABLED: "1", GH_NO_UPDATE_NOTIFIER: "1", NO_COLOR: "1" };
}

export function gh(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs?: number,
): Promise<RunResult> {
  return run("gh", args, { cwd, env: ghEnv(env), timeoutMs });
}

/**
 * gh for the board's sync (ECC's `work-items sync-github`): `node
 * $ECC_GH_SHIM <args>` when that variable names a script standing in for gh,
 * else gh itself. Output can be large (every open PR with its checks).
 */
export function ghSync(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<RunResult> {
  const shim = env.ECC_GH_SHIM;
  const [cmd, argv] =
    shim !== undefined && shim !== "" ? [process.execPath, [shim, ...args]] : ["gh", args];
  return run(cmd, argv, { cwd, env: ghEnv(env), timeoutMs, maxBuffer: 64 * 1024 * 1024 });
}

/** Whether gh is installed, and signed in (`gh auth status` exits 0). */
export async function probeGh(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<GhState> {
  if (onPath("gh", env) === undefined) return "not-installed";
  const r = await gh(cwd, ["auth", "status"], env);
  if (r.failure === "missing") return "not-installed";
  return r.ok ? "ok" : "not-authenticated";
}

export interface RemoteCheck {
  name: string;
  status: string;
  url: string | null;
}

export interface GithubFacts {
  state: GhState;
  openPullRequests: number | null;
  openIssues: number | null;
  /** The open or merged PR of the worktree's branch (`gh pr view`). */
  latestPullRequest: number | null;
  /** Checks of the branch's PR, else its latest workflow runs; null = unknown. */
  remoteChecks: RemoteCheck[] | null;
}

const NOTHING = {
  openPullRequests: null,
  openIssues: null,
  latestPullRequest: null,
  remoteChecks: null,
};

/** Everything the HUD reads from GitHub for one worktree. */
export async function githubFacts(
  cwd: string,
  branch: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<GithubFacts> {
  if (onPath("gh", env) === undefined) return { state: "not-installed", ...NOTHING };
  // Authentication is checked alongside the reads rather than before them: an
  // unauthenticated gh fails fast, and a signed-in one answers sooner.
  const [auth, view, checks, prs, issues] = await Promise.all([
    gh(cwd, ["auth", "status"], env),
    gh(cwd, ["pr", "view", "--json", "number"], env),
    gh(cwd, ["pr", "checks", "--json", "name,bucket,link"], env),
    gh(cwd, ["pr", "list", "--state", "open", "--limit", "1000", "--json", "number"], env),
    gh(cwd, ["issue", "list", "--state", "open", "--limit", "1000", "--json", "number"], env),
  ]);
  if (auth.failure === "missing") return { state: "not-installed", ...NOTHING };
  if (!auth.ok) return { state: "not-authenticated", ...NOTHING };
  let remoteChecks = prChecks(checks);
  if (remoteChecks === "no-pr")
    remoteChecks = branch === null ? null : await latestRuns(cwd, branch, env);
  return {
    state: "ok",
    openPullRequests: countOf(prs),
    openIssues: countOf(issues),
    latestPullRequest: prNumber(view),
    remoteChecks,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function countOf(r: RunResult): number | null {
  const list = r.ok ? parseJson(r.stdout) : undefined;
  return Array.isArray(list) ? list.length : null;
}

export function prNumber(r: RunResult): number | null {
  const v = r.ok ? parseJson(r.stdout) : undefined;
  const n = (v as { number?: unknown } | undefined)?.number;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : null;
}

/** `gh pr checks --json name,bucket,link`; exits 1 on failing and 8 on
 * pending checks, so the output is read whatever the status. */
function prChecks(r: RunResult): RemoteCheck[] | "no-pr" | null {
  const list = parseJson(r.stdout);
  if (Array.isArray(list))
    return list.flatMap((c: Record<string, unknown>) =>
      typeof c?.name === "string"
        ? [
            {
              name: c.name,
              status: typeof c.bucket === "string" ? c.bucket : "unknown",
              url: typeof c.link === "string" && c.link !== "" ? c.link : null,
            },
          ]
        : [],
    );
  if (/no checks reported/i.test(r.stderr)) return [];
  if (/no (open )?pull requests? found/i.test(r.stderr)) return "no-pr";
  return null;
}

/** Without a PR: the latest run of each workflow on the branch. */
async function latestRuns(
  cwd: string,
  branch: string,
  env: NodeJS.ProcessEnv,
): Promise<RemoteCheck[] | null> {
  const r = await gh(
    cwd,
    [
      "run",
      "list",
      "--branch",
      branch,
      "--limit",
      "20",
      "--json",
      "workflowName,status,conclusion,url",
    ],
    env,
  );
  const list = r.ok ? parseJson(r.stdout) : undefined;
  if (!Array.isArray(list)) return null;
  const seen = new Set<string>();
  const out: RemoteCheck[] = [];
  for (const run of list as Record<string, unknown>[]) {
    const name = typeof run?.workflowName === "string" ? run.workflowName : undefined;
    if (name === undefined || seen.has(name)) continue;
    seen.add(name);
    out.push({
      name,
      status: runBucket(run.status, run.conclusion),
      url: typeof run.url === "string" && run.url !== "" ? run.url : null,
    });
  }
  return out;
}

/** A workflow run's status/conclusion in `gh pr checks`' buckets. */
export function runBucket(status: unknown, conclusion: unknown): string {
  if (status !== "completed") return "pending";
  switch (conclusion) {
    case "success":
      return "pass";
    case "failure":
    case "timed_out":
    case "startup_failure":
    case "action_required":
      return "fail";
    case "cancelled":
      return "cancel";
    case "skipped":
    case "neutral":
      return "skipping";
    default:
      return "unknown";
  }
}
