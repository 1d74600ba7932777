import { describe, expect, it } from "vitest";
import { applySync, type SyncResult } from "../../src/board/sync/apply.js";
import { linearPriority, linearStatus } from "../../src/board/sync/linear.js";
import { closeSynced, mergeSynced, type SyncedItem } from "../../src/board/sync/merge.js";
import { checkConfig } from "../../src/config/config.js";
import type { WorkItem } from "../../src/contract/ecc/board.js";
import { checksState, mergeClass } from "../../src/contract/ecc/merge-queue.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import { SyncRunsStore } from "../../src/store/sync-runs.js";
import { WorkItemsStore } from "../../src/store/work-items.js";

const run = (name: string, status: string, conclusion = "") => ({
  __typename: "CheckRun",
  name,
  status,
  conclusion,
});
const ctx = (context: string, state: string) => ({ __typename: "StatusContext", context, state });

describe("merge queue classes", () => {
  it("statusCheckRollup folds to pass, fail, pending or none", () => {
    expect(checksState([])).toBe("none");
    expect(checksState(null)).toBe("none");
    expect(checksState([run("test", "COMPLETED", "SUCCESS"), ctx("ci", "SUCCESS")])).toBe("pass");
    expect(
      checksState([run("test", "COMPLETED", "SKIPPED"), run("l", "COMPLETED", "NEUTRAL")]),
    ).toBe("pass");
    expect(checksState([run("test", "IN_PROGRESS"), ctx("ci", "SUCCESS")])).toBe("pending");
    expect(checksState([run("test", "QUEUED"), ctx("ci", "PENDING")])).toBe("pending");
    // A failure wins over anything still running.
    expect(checksState([run("test", "IN_PROGRESS"), ctx("ci", "ERROR")])).toBe("fail");
    expect(checksState([run("test", "COMPLETED", "TIMED_OUT")])).toBe("fail");
  });

  it("classes follow review, checks and merge state; nothing known is no class", () => {
    const c = (f: Parameters<typeof mergeClass>[0]) => mergeClass(f)?.class ?? null;
    expect(c({ mergeStateStatus: "CLEAN", reviewDecision: "APPROVED", checks: "pass" })).toBe(
      "ready",
    );
    expect(c({ mergeStateStatus: "CLEAN", reviewDecision: "", checks: "none" })).toBe("ready");
    expect(c({ mergeStateStatus: "HAS_HOOKS", checks: "pass" })).toBe("ready");
    expect(c({ mergeStateStatus: "CLEAN", isDraft: true, checks: "pass" })).toBe("blocked");
    expect(c({ mergeStateStatus: "DIRTY", reviewDecision: "APPROVED", checks: "pass" })).toBe(
      "blocked",
    );
    expect(c({ mergeStateStatus: "CLEAN", reviewDecision: "CHANGES_REQUESTED" })).toBe("blocked");
    expect(c({ mergeStateStatus: "UNSTABLE", checks: "fail" })).toBe("blocked");
    expect(c({ mergeStateStatus: "BLOCKED", reviewDecision: "APPROVED", checks: "pending" })).toBe(
      "waiting-check",
    );
    expect(
      c({ mergeStateStatus: "BLOCKED", reviewDecision: "REVIEW_REQUIRED", checks: "pass" }),
    ).toBe("blocked");
    expect(c({ mergeStateStatus: "BEHIND", checks: "pass" })).toBe("blocked");
    // GitHub still computing, or a hand-fed gate that names no class.
    expect(c({ mergeStateStatus: "UNKNOWN", checks: "pass" })).toBeNull();
    expect(c({ mergeGate: "needs-ci" })).toBeNull();
    expect(c({ mergeGate: "waiting-check" })).toBe("waiting-check");
  });
});

const NOW = "2026-12-01T10:00:00.000Z";
const LATER = "2026-12-01T11:00:00.000Z";

function desired(over: Partial<SyncedItem> = {}): SyncedItem {
  return {
    id: "github-acme-widgets-pr-7",
    source: "github",
    sourceId: "acme/widgets#7",
    title: "A PR",
    status: "needs-review",
    priority: "normal",
    url: "https://github.com/acme/widgets/pull/7",
    owner: null,
    metadata: {
      repo: "acme/widgets",
      type: "pr",
      authorLogin: "hubot",
      assignees: [],
      syncedBy: "ecc-work-items-sync-github",
      sourceUpdatedAt: "2026-11-30T00:00:00Z",
    },
    ...over,
  };
}

describe("what a re-sync keeps", () => {
  it("unchanged upstream and here: nothing to write", () => {
    const first = mergeSynced(undefined, desired(), NOW)!;
    expect(first).toMatchObject({ createdAt: NOW, status: "needs-review", repoRoot: null });
    expect(mergeSynced(first, desired(), LATER)).toBeUndefined();
  });

  it("a status, owner or priority set here stays; the source's own fields follow it", () => {
    const first = mergeSynced(undefined, desired(), NOW)!;
    const here: WorkItem = { ...first, status: "running", owner: "alice", priority: "critical" };
    const next = mergeSynced(
      here,
      desired({ title: "Renamed", status: "blocked", owner: "octocat", priority: "high" }),
      LATER,
    )!;
    expect(next).toMatchObject({
      title: "Renamed",
      status: "running",
      owner: "alice",
      priority: "critical",
      createdAt: NOW,
      updatedAt: LATER,
    });
    // What the sync left alone, it changes again: the source moved on.
    const own = mergeSynced(first, desired({ status: "blocked", owner: "octocat" }), LATER)!;
    expect(own).toMatchObject({ status: "blocked", owner: "octocat" });
  });

  it("the source ending the work ends it even over a status set here; a done item stays done", () => {
    const first = mergeSynced(undefined, desired(), NOW)!;
    const claimed: WorkItem = { ...first, status: "running", owner: "alice" };
    expect(mergeSynced(claimed, desired({ status: "done" }), LATER)).toMatchObject({
      status: "done",
      owner: "alice",
    });
    expect(closeSynced(claimed, "closed", LATER, "closed")).toMatchObject({ status: "closed" });
    expect(closeSynced({ ...claimed, status: "done" }, "closed", LATER, "closed")).toBeUndefined();
  });

  it("a row ECC's sync wrote with the author as owner is released; another owner is kept", () => {
    const legacy: WorkItem = {
      ...mergeSynced(undefined, desired(), NOW)!,
      owner: "hubot",
      metadata: { repo: "acme/widgets", syncedBy: "ecc-work-items-sync-github" },
    };
    expect(mergeSynced(legacy, desired(), LATER)!.owner).toBeNull();
    expect(mergeSynced({ ...legacy, owner: "carol" }, desired(), LATER)!.owner).toBe("carol");
  });
});

describe("applying a sync", () => {
  it("one transaction: a write failing halfway leaves the board and the run record as they were", () => {
    const store = openStateStore(":memory:");
    const result = (items: SyncedItem[]): SyncResult => ({
      source: "github",
      target: "acme/widgets",
      startedAt: NOW,
      items,
      known: [],
      closures: [],
      retained: [],
      facts: { repo: "acme/widgets" },
    });
    applySync(store, result([desired()]));
    const before = JSON.stringify(new WorkItemsStore(store.db).recent(10));
    const runBefore = new SyncRunsStore(store.db).get("github");
    // The second item breaks a NOT NULL column after the first was written.
    const broken = desired({ id: "github-acme-widgets-pr-8", title: null as unknown as string });
    expect(() =>
      applySync(store, result([desired({ id: "github-acme-widgets-pr-9" }), broken])),
    ).toThrow();
    expect(JSON.stringify(new WorkItemsStore(store.db).recent(10))).toBe(before);
    expect(new SyncRunsStore(store.db).get("github")).toEqual(runBefore);
    store.close();
  });
});

describe("Linear's words on the board", () => {
  it("workflow states map to statuses in the board's lanes; priorities to words", () => {
    expect(linearStatus({ name: "Todo", type: "unstarted" })).toBe("open");
    expect(linearStatus({ name: "Triage", type: "triage" })).toBe("open");
    expect(linearStatus({ name: "In Progress", type: "started" })).toBe("in-progress");
    expect(linearStatus({ name: "In Review", type: "started" })).toBe("needs-review");
    expect(linearStatus({ name: "Blocked", type: "unstarted" })).toBe("blocked");
    expect(linearStatus({ name: "Done", type: "completed" })).toBe("done");
    expect(linearStatus({ name: "Duplicate", type: "canceled" })).toBe("cancelled");
    expect([0, 1, 2, 3, 4].map(linearPriority)).toEqual([null, "urgent", "high", "medium", "low"]);
  });
});

describe("the sync config", () => {
  const check = (sync: unknown) => checkConfig({ sync }, "/c.json");
  it("takes the documented keys", () => {
    expect(
      check({
        github: { repo: "acme/widgets", interval_seconds: 300 },
        linear: {
          project: "Widgets v2",
          endpoint: "https://api.linear.app/graphql",
          token_env: "LINEAR_API_KEY",
          interval_seconds: 600,
        },
      }).sync,
    ).toMatchObject({ github: { repo: "acme/widgets" }, linear: { token_env: "LINEAR_API_KEY" } });
  });
  it.each([
    [{ gitlab: {} }, "sync.gitlab: unknown key"],
    [{ github: { repo: "widgets" } }, "sync.github.repo: must be owner/name"],
    [{ github: { interval_seconds: 0 } }, "sync.github.interval_seconds: must be a whole number"],
    [{ github: { interval_seconds: 1.5 } }, "sync.github.interval_seconds: must be a whole number"],
    [{ linear: { endpoint: "ftp://x" } }, "sync.linear.endpoint: must be an http(s) URL"],
    [
      { linear: { token_env: "MY-KEY" } },
      "sync.linear.token_env: must be an environment variable name",
    ],
    [{ linear: { token: "lin_api_x" } }, "sync.linear.token: unknown key"],
  ])("refuses %j", (sync, msg) => {
    expect(() => check(sync)).toThrow(msg);
  });
});
