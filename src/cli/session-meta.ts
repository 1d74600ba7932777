import { basename } from "node:path";
import type { SessionMeta } from "../contract/peers.js";
import { git, mainWorktree, repoName } from "../probes/git.js";

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
 * `branch`. Outside a work tree, or without git, only `cwd`. */
export async function derivedMeta(cwd: string = sessionCwd()): Promise<SessionMeta> {
  const options = { timeoutMs: GIT_TIMEOUT_MS };
  const [top, head, origin] = await Promise.all([
    git(cwd, ["rev-parse", "--show-toplevel", "--git-common-dir"], options),
    git(cwd, ["symbolic-ref", "--quiet", "--short", "HEAD"], options),
    git(cwd, ["remote", "get-url", "origin"], options),
  ]);
  const [toplevel, common] = top.ok ? top.stdout.trim().split("\n") : [];
  if (!toplevel || !common) return { cwd };
  const root = mainWorktree(cwd, toplevel, common);
  const meta: SessionMeta = {
    cwd,
    repo_root: root,
    repo: repoName(root, origin.ok ? origin.stdout.trim() || null : null),
    ws: basename(toplevel),
  };
  const branch = head.ok ? head.stdout.trim() : "";
  if (branch !== "") meta.branch = branch;
  return meta;
}
