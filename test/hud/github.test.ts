import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { githubFacts, probeGh, runBucket } from "../../src/probes/github.js";
import { fakeGh, git, makeRepo, pathOf, tempDir, toolsDir } from "./helpers.js";

const CHECKS = [
  { name: "ci / test", bucket: "pass", link: "https://github.com/acme/widgets/actions/runs/1" },
  { name: "ci / lint", bucket: "fail", link: "" },
];

function envWith(dir: string): NodeJS.ProcessEnv {
  return { ...process.env, PATH: pathOf(dir, process.env.PATH ?? "") };
}

describe("GitHub through gh", () => {
  it("signed in: open PR and issue counts, the branch's PR and its checks", async () => {
    const repo = makeRepo();
    const bin = fakeGh(tempDir(), {
      pr: { number: 42 },
      checks: { json: CHECKS, exit: 1 }, // gh exits 1 when a check failed
      prs: 3,
      issues: 7,
    });
    const f = await githubFacts(repo, "main", envWith(bin));
    expect(f).toEqual({
      state: "ok",
      openPullRequests: 3,
      openIssues: 7,
      latestPullRequest: 42,
      remoteChecks: [
        {
          name: "ci / test",
          status: "pass",
          url: "https://github.com/acme/widgets/actions/runs/1",
        },
        { name: "ci / lint", status: "fail", url: null },
      ],
    });
  });

  it("pending checks (exit 8) are still read", async () => {
    const bin = fakeGh(tempDir(), {
      pr: { number: 5 },
      checks: { json: [{ name: "build", bucket: "pending", link: "https://x/1" }], exit: 8 },
    });
    const f = await githubFacts(makeRepo(), "main", envWith(bin));
    expect(f.remoteChecks).toEqual([{ name: "build", status: "pending", url: "https://x/1" }]);
  });

  it("no PR for the branch: no PR number, checks from the branch's latest workflow runs", async () => {
    const repo = makeRepo();
    git(repo, "checkout", "-q", "-b", "feat/x");
    const dir = tempDir();
    const bin = fakeGh(dir, {
      runs: [
        { workflowName: "CI", status: "completed", conclusion: "success", url: "https://r/3" },
        { workflowName: "CI", status: "completed", conclusion: "failure", url: "https://r/2" },
        { workflowName: "Release", status: "in_progress", conclusion: "", url: "https://r/1" },
      ],
    });
    const f = await githubFacts(repo, "feat/x", envWith(bin));
    expect(f.latestPullRequest).toBeNull();
    // Only the newest run of each workflow counts.
    expect(f.remoteChecks).toEqual([
      { name: "CI", status: "pass", url: "https://r/3" },
      { name: "Release", status: "pending", url: "https://r/1" },
    ]);
    expect(readFileSync(join(dir, "gh.log"), "utf8")).toContain("run list --branch feat/x");
  });

  it("not signed in: every GitHub signal is unknown", async () => {
    const bin = fakeGh(tempDir(), { authenticated: false, pr: { number: 42 }, prs: 3 });
    const f = await githubFacts(makeRepo(), "main", envWith(bin));
    expect(f).toEqual({
      state: "not-authenticated",
      openPullRequests: null,
      openIssues: null,
      latestPullRequest: null,
      remoteChecks: null,
    });
    expect(await probeGh(makeRepo(), envWith(bin))).toBe("not-authenticated");
  });

  it("no gh at all: not installed", async () => {
    const env = { ...process.env, PATH: toolsDir(["git"]) };
    expect((await githubFacts(makeRepo(), "main", env)).state).toBe("not-installed");
    expect(await probeGh(makeRepo(), env)).toBe("not-installed");
  });
});

describe("runBucket", () => {
  it("maps a workflow run to gh's check buckets", () => {
    expect(runBucket("completed", "success")).toBe("pass");
    expect(runBucket("completed", "failure")).toBe("fail");
    expect(runBucket("completed", "timed_out")).toBe("fail");
    expect(runBucket("completed", "cancelled")).toBe("cancel");
    expect(runBucket("completed", "skipped")).toBe("skipping");
    expect(runBucket("queued", "")).toBe("pending");
    expect(runBucket("completed", "something-new")).toBe("unknown");
  });
});
