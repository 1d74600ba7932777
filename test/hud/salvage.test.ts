import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { staleSalvageQueue } from "../../src/hud/salvage.js";
import { probeGit } from "../../src/probes/git.js";
import type { MirroredSession } from "../../src/store/ecc-sessions.js";
import { git, gitEnv, makeRepo, tempDir } from "./helpers.js";

// The HUD's stale-salvage queue: worktrees whose session went quiet with work
// nobody merged.

const HOUR = 3_600_000;

function session(sid: string, cwd: string, repoRoot: string, extra: Partial<MirroredSession>) {
  return { sid, instance: "0".repeat(32), cwd, repo_root: repoRoot, ...extra } as MirroredSession;
}

describe("staleSalvageQueue", () => {
  it("lists quiet sessions' worktrees with unmerged commits or changes, and nothing else", async () => {
    const root = tempDir();
    const repo = makeRepo(root);
    const wt = (name: string) => {
      const path = join(root, name);
      git(repo, "worktree", "add", "-q", "-b", name, path);
      return path;
    };
    const ahead = wt("ahead");
    writeFileSync(join(ahead, "new.txt"), "work\n");
    git(ahead, "add", ".");
    git(ahead, "commit", "-q", "-m", "unmerged work");
    const dirty = wt("dirty");
    writeFileSync(join(dirty, "f.txt"), "uncommitted\n");
    const merged = wt("merged"); // nothing beyond main
    const busy = wt("busy");
    writeFileSync(join(busy, "f.txt"), "still working\n");
    const now = Date.parse("2026-11-30T12:00:00Z");
    const sessions = [
      session("s-ahead", ahead, repo, { state: "disappeared", last_seen_at: now - 2 * HOUR }),
      session("s-dirty", dirty, repo, { state: "paused", last_seen_at: now - 3 * HOUR }),
      session("s-merged", merged, repo, { state: "disappeared", last_seen_at: now - 2 * HOUR }),
      // Lost only a minute ago: not quiet yet.
      session("s-recent", ahead, repo, { state: "disappeared", last_seen_at: now - 60_000 }),
      // Someone is connected in this worktree.
      session("s-busy-old", busy, repo, { state: "disappeared", last_seen_at: now - 5 * HOUR }),
      session("s-busy", busy, repo, { state: "active", connected_at: now - HOUR }),
      // Another repository.
      session("s-other", ahead, "/elsewhere", {
        state: "disappeared",
        last_seen_at: now - 5 * HOUR,
      }),
    ];
    const facts = await probeGit(repo, { env: gitEnv() });
    if (facts.state !== "ok") throw new Error(facts.state);
    const queue = await staleSalvageQueue(facts, sessions, now, HOUR, { env: gitEnv() });
    expect(queue).toEqual([
      {
        sourcePullRequest: null,
        status: "stale",
        sessionId: "s-ahead",
        branch: "ahead",
        worktree: ahead,
        aheadCommits: 1,
        dirty: false,
        lastSeenAt: new Date(now - 2 * HOUR).toISOString(),
      },
      {
        sourcePullRequest: null,
        status: "stale",
        sessionId: "s-dirty",
        branch: "dirty",
        worktree: dirty,
        aheadCommits: 0,
        dirty: true,
        lastSeenAt: new Date(now - 3 * HOUR).toISOString(),
      },
    ]);
    expect(await staleSalvageQueue(facts, undefined, now, HOUR)).toBeUndefined();
  });
});
