import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { derivedMeta } from "../../src/client/session-meta.js";
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
