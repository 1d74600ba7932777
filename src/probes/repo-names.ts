import { basename, dirname, isAbsolute, resolve } from "node:path";

// The names ccmsg gives a repository and its main worktree, from what git (or
// the repository's files) says of them. Apart from git.ts, so a command that
// only names its repository loads no git runner.

/** The name a repository goes by wherever ccmsg shows one — a session's
 * `repo` meta (what `peers` shows) and the HUD's `context.repo`: `owner/name`
 * of its origin, else the main worktree's directory name. Every worktree of a
 * checkout gets the same name. */
export function repoName(mainRoot: string, remoteUrl: string | null): string {
  return (remoteUrl === null ? null : repoSlug(remoteUrl)) ?? basename(mainRoot);
}

/** The main worktree of a repository, from `git rev-parse --git-common-dir`
 * (relative to `cwd` when git answers so): the directory holding `.git`, or
 * the worktree itself for a repository whose git dir lives elsewhere. */
export function mainWorktree(cwd: string, toplevel: string, commonDir: string): string {
  const common = isAbsolute(commonDir) ? commonDir : resolve(cwd, commonDir);
  return basename(common) === ".git" ? dirname(common) : toplevel;
}

/** `owner/name` from a remote URL (scp-like `git@host:o/n.git`, `https://`,
 * `ssh://`); null for a local path or anything else without both parts. */
export function repoSlug(url: string): string | null {
  let path: string | undefined;
  const scp = /^[\w.-]+@[\w.-]+:(?!\/)(.+)$/.exec(url);
  if (scp) path = scp[1];
  else {
    try {
      const u = new URL(url);
      if (u.protocol === "file:" || u.hostname === "") return null;
      path = u.pathname;
    } catch {
      return null;
    }
  }
  const parts = (path ?? "")
    .replace(/\.git\/?$/, "")
    .split("/")
    .filter((p) => p !== "");
  if (parts.length < 2) return null;
  return `${parts[parts.length - 2]}/${parts[parts.length - 1]}`;
}
