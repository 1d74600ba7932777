import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deriveByGit, derivedMeta } from "../../src/client/session-meta.js";
import { gitLayout } from "../../src/probes/git-files.js";
import { git, makeRepo, tempDir } from "../hud/helpers.js";

// The meta every greeting of a session carries, derived from its directory.
describe("derived session meta", () => {
  it("a checkout and its worktree: one repository name and root, each its own ws and branch", async () => {
    const repo = makeRepo(tempDir(), "widgets");
    const wt = join(repo, "..", "widgets-feat");
    git(repo, "worktree", "add", "-q", "-b", "feat", wt);
    mkdirSync(join(wt, "sub"));
    expect(await derivedMeta(repo)).toEqual({
      cwd: repo,
      repo_root: repo,
      repo: "acme/widgets",
      ws: "widgets",
      branch: "main",
    });
    expect(await derivedMeta(join(wt, "sub"))).toEqual({
      cwd: join(wt, "sub"),
      repo_root: repo,
      repo: "acme/widgets",
      ws: "widgets-feat",
      branch: "feat",
    });
  });

  it("before the first commit, without an origin, detached, outside git", async () => {
    const fresh = join(tempDir(), "fresh");
    mkdirSync(fresh);
    git(fresh, "init", "-q", "-b", "main");
    expect(await derivedMeta(fresh)).toEqual({
      cwd: fresh,
      repo_root: fresh,
      repo: "fresh",
      ws: "fresh",
    });
    const repo = makeRepo(tempDir(), "gears");
    git(repo, "checkout", "-q", "--detach");
    expect(await derivedMeta(repo)).toMatchObject({ repo: "acme/widgets", ws: "gears" });
    expect(await derivedMeta(repo)).not.toHaveProperty("branch");
    const plain = tempDir();
    expect(await derivedMeta(plain)).toEqual({ cwd: plain });
  });
});

// The meta is read from the repository's files where they are plain, with no
// git process; it must be exactly what git says, and anything git could
// answer differently is left to git.
describe("session meta read from the repository's files", () => {
  let asked = 0;
  /** Read from files (not left to git), and the same as git's answer; in a
   * directory of its own each time, as the meta is derived once per directory. */
  async function sameAsGit(at: string) {
    const cwd = join(at, `asked-${++asked}`);
    mkdirSync(cwd);
    expect(gitLayout(cwd), `files answer for ${cwd}`).toBeDefined();
    const meta = await derivedMeta(cwd);
    expect(meta).toEqual(await deriveByGit(cwd));
    return meta;
  }

  it("checkouts, linked worktrees, packed and unborn branches, detached HEADs", async () => {
    const repo = makeRepo(tempDir(), "widgets");
    expect(await sameAsGit(repo)).toMatchObject({ repo: "acme/widgets", branch: "main" });
    const wt = join(repo, "..", "widgets-feat");
    git(repo, "worktree", "add", "-q", "-b", "feat/x", wt);
    mkdirSync(join(wt, "deep", "er"), { recursive: true });
    expect(await sameAsGit(join(wt, "deep", "er"))).toMatchObject({
      repo_root: repo,
      ws: "widgets-feat",
      branch: "feat/x",
    });
    git(repo, "pack-refs", "--all");
    expect(await sameAsGit(wt)).toMatchObject({ branch: "feat/x" });
    git(wt, "checkout", "-q", "--detach");
    expect(await sameAsGit(wt)).not.toHaveProperty("branch");
    git(repo, "checkout", "-q", "--orphan", "unborn");
    expect(await sameAsGit(repo)).not.toHaveProperty("branch");

    const bare = makeRepo(tempDir(), "nameless");
    git(bare, "remote", "remove", "origin");
    expect(await sameAsGit(bare)).toMatchObject({ repo: "nameless" });
  });

  it("leaves to git what its config or environment could change", async () => {
    const repo = makeRepo(tempDir(), "widgets");
    expect(gitLayout(repo, { HOME: tempDir() })).toBeDefined();
    expect(gitLayout(repo, { HOME: tempDir(), GIT_DIR: join(repo, ".git") })).toBeUndefined();
    const home = tempDir();
    writeFileSync(
      join(home, ".gitconfig"),
      '[url "git@github.com:"]\n\tinsteadOf = https://github.com/\n',
    );
    expect(gitLayout(repo, { HOME: home })).toBeUndefined();
    appendFileSync(
      join(repo, ".git", "config"),
      '[includeIf "gitdir:~/work/"]\n\tpath = work.conf\n',
    );
    expect(gitLayout(repo, { HOME: tempDir() })).toBeUndefined();
    // In no repository: said without git, unless a directory on the way is
    // a git dir itself (a bare repository, or inside .git).
    const plain = tempDir();
    expect(gitLayout(plain, { HOME: tempDir() })).toBeNull();
    expect(await deriveByGit(plain)).toEqual({ cwd: plain });
    const bareRepo = join(tempDir(), "store.git");
    git(tempDir(), "init", "-q", "--bare", bareRepo);
    mkdirSync(join(bareRepo, "inside"));
    expect(gitLayout(join(bareRepo, "inside"), { HOME: tempDir() })).toBeUndefined();
    expect(gitLayout(join(repo, ".git", "refs"), { HOME: tempDir() })).toBeUndefined();
    expect(await derivedMeta(repo)).toEqual(await deriveByGit(repo));
    // A submodule's git dir names its worktree in its config (core.worktree).
    const lib = makeRepo(tempDir(), "lib");
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
    const sub = join(repo, "vendor", "lib");
    expect(gitLayout(sub, { HOME: tempDir() })).toBeUndefined();
    expect(await derivedMeta(sub)).toMatchObject({ repo_root: sub, ws: "lib", branch: "main" });
  });
});
