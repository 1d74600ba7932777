import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conflictedWorktrees, type GitFacts, probeGit } from "../../src/probes/git.js";
import { repoSlug } from "../../src/probes/repo-names.js";
import { conflict, git, makeRepo, tempDir, toolsDir } from "./helpers.js";

async function facts(cwd: string): Promise<GitFacts> {
  const f = await probeGit(cwd);
  if (f.state !== "ok") throw new Error(`git: ${f.state}`);
  return f;
}

describe("git facts of a worktree", () => {
  it("a clean repository: branch, top level, origin as owner/name", async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, "src"));
    const f = await facts(join(repo, "src"));
    expect(f).toMatchObject({
      toplevel: repo,
      mainRoot: repo,
      branch: "main",
      head: git(repo, "rev-parse", "HEAD").trim(),
      repoSlug: "acme/widgets",
      dirty: false,
      unmergedPaths: [],
    });
  });

  it("a changed or untracked file makes it dirty", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, "new.txt"), "x");
    expect((await facts(repo)).dirty).toBe(true);
    const other = makeRepo();
    writeFileSync(join(other, "f.txt"), "changed\n");
    expect((await facts(other)).dirty).toBe(true);
  });

  it("a merge conflict is counted, and the worktree joins the conflict queue", async () => {
    const repo = makeRepo();
    conflict(repo);
    const f = await facts(repo);
    expect(f.unmergedPaths).toEqual(["f.txt"]);
    expect(await conflictedWorktrees(f)).toEqual([
      { kind: "worktree", path: repo, branch: "main", conflicts: 1 },
    ]);
  });

  it("another worktree of the repository with a conflict is found too", async () => {
    const repo = makeRepo();
    const wt = `${repo}-feature`;
    git(repo, "worktree", "add", "-q", "-b", "feature", wt);
    conflict(wt, "feature-other");
    const f = await facts(repo);
    expect(f.worktrees.map((w) => w.path)).toEqual([repo, wt]);
    expect(f.unmergedPaths).toEqual([]);
    expect(await conflictedWorktrees(f)).toEqual([
      { kind: "worktree", path: wt, branch: "feature", conflicts: 1 },
    ]);
    // Seen from the other worktree, the main root is still the repository's.
    expect((await facts(wt)).mainRoot).toBe(repo);
  });

  it("a detached HEAD has no branch", async () => {
    const repo = makeRepo();
    git(repo, "checkout", "-q", "--detach");
    expect((await facts(repo)).branch).toBeNull();
  });

  it("outside a repository, in a vanished directory, or without git: a reason, not facts", async () => {
    expect((await probeGit(tempDir())).state).toBe("not-a-repo");
    expect((await probeGit(join(tempDir(), "gone"))).state).toBe("no-directory");
    const noGit = { ...process.env, PATH: toolsDir([]) };
    expect((await probeGit(makeRepo(), { env: noGit })).state).toBe("not-installed");
  });

  it("origin without an owner/name (a local path) gives no slug", async () => {
    const repo = makeRepo();
    git(repo, "remote", "set-url", "origin", "/srv/git/widgets.git");
    expect((await facts(repo)).repoSlug).toBeNull();
  });
});

describe("repoSlug", () => {
  it.each([
    ["git@github.com:acme/widgets.git", "acme/widgets"],
    ["https://github.com/acme/widgets", "acme/widgets"],
    ["https://github.com/acme/widgets.git", "acme/widgets"],
    ["ssh://git@github.com:22/acme/widgets.git", "acme/widgets"],
    ["https://gitlab.example.com/group/sub/widgets.git", "sub/widgets"],
    ["/srv/git/widgets.git", null],
    ["file:///srv/git/acme/widgets.git", null],
    ["https://github.com/acme", null],
  ])("%s → %s", (url, slug) => {
    expect(repoSlug(url)).toBe(slug);
  });
});
