import { basename, isAbsolute } from "node:path";
import type { SessionMeta } from "../contract/peers.js";
import { type GitLayout, gitLayout } from "../probes/git-files.js";
import { mainWorktree, repoName } from "../probes/repo-names.js";

// The meta a session announces when it greets: the same for `ccmsg hello` and
// for every other command that connects as a session (`subscribe`, `post`,
// `inbox` …), so a session whose only connection is `ccmsg subscribe inbox`
// still says where it works and is found as a candidate in its repository.

/** git gets this long per call; a slower answer leaves the git fields out. */
const GIT_TIMEOUT_MS = 2000;

/** The session's directory: `--cwd`, else the harness's project directory,
 * else the one a hook's payload names, else the directory the command runs in. */
export function sessionCwd(
  flag?: string,
  payloadCwd?: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return flag ?? env.CLAUDE_PROJECT_DIR ?? payloadCwd ?? process.cwd();
}

/** `cwd` and what git says of it: `repo` (see repoName), `ws` (the worktree's
 * directory name), `repo_root` (the main worktree, shared by all worktrees of
 * a repository: what "the same repository" means for candidates) and
 * `branch` (none when detached or before the first commit). Outside a work
 * tree, or without git, only `cwd`. Read from the repository's files where
 * they are plain (probes/git-files.ts), else asked of git: two processes on
 * the command's way to its greeting. Derived once per directory per process;
 * main.ts starts it early, beside loading the command. */
export function derivedMeta(cwd: string = sessionCwd()): Promise<SessionMeta> {
  let meta = derived.get(cwd);
  if (meta === undefined) {
    meta = derive(cwd);
    derived.set(cwd, meta);
  }
  return meta;
}

const derived = new Map<string, Promise<SessionMeta>>();

async function derive(cwd: string): Promise<SessionMeta> {
  const layout = gitLayout(cwd);
  if (layout === undefined) return deriveByGit(cwd);
  if (layout === null) return { cwd };
  return metaOf(cwd, layout);
}

/** The same meta, from git itself. */
export async function deriveByGit(cwd: string): Promise<SessionMeta> {
  const { git } = await import("../probes/git.js");
  const options = { timeoutMs: GIT_TIMEOUT_MS };
  const [top, origin] = await Promise.all([
    // Before the first commit this exits 128 for HEAD, having printed the rest.
    git(
      cwd,
      ["rev-parse", "--show-toplevel", "--git-common-dir", "--symbolic-full-name", "HEAD"],
      options,
    ),
    git(cwd, ["remote", "get-url", "origin"], options),
  ]);
  const [toplevel, common, head] = top.stdout.trim().split("\n");
  if (top.failure !== undefined && top.failure !== "exit") return { cwd };
  if (!toplevel || !common || !isAbsolute(toplevel)) return { cwd };
  return metaOf(cwd, {
    toplevel,
    commonDir: common,
    head: head ?? null,
    originUrl: origin.ok ? origin.stdout.trim() || null : null,
  });
}

/** Both readers' answer as the greeting's meta. */
function metaOf(cwd: string, { toplevel, commonDir, head, originUrl }: GitLayout): SessionMeta {
  const root = mainWorktree(cwd, toplevel, commonDir);
  const meta: SessionMeta = {
    cwd,
    repo_root: root,
    repo: repoName(root, originUrl),
    ws: basename(toplevel),
  };
  if (head?.startsWith("refs/heads/")) meta.branch = head.slice("refs/heads/".length);
  return meta;
}
