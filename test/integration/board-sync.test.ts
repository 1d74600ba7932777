import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stateFiles } from "../../src/state/paths.js";
import {
  type FakeLinear,
  type FakeLinearProject,
  fakeLinear,
  USAGE_LIMIT_REFUSAL,
} from "../helpers/fake-linear.js";
import { defaultStateDir, isolatedHome, ROOT, runCli } from "../helpers/instance.js";

// `ccmsg board sync github|linear` against a fake gh (recorded `gh … --json`
// output, test/fixtures/gh) and a fake Linear GraphQL server: what lands on
// the board, what a re-sync keeps, what the HUD and `ccmsg status` show, and
// that a failed sync leaves the board exactly as it was.

const FAKE_GH = join(ROOT, "test", "helpers", "fake-gh.mjs");
const FIXTURES = join(ROOT, "test", "fixtures", "gh");
const PR = (n: number) => `github-acme-widgets-pr-${n}`;
const ISSUE = (n: number) => `github-acme-widgets-issue-${n}`;

type Env = Record<string, string>;
type Item = Record<string, unknown> & {
  id: string;
  status: string;
  metadata: Record<string, unknown>;
};

/** An isolated home with the fake gh on PATH and its own copy of the
 * recorded answers (a test edits them to move GitHub on). */
function ghHome(options: { onPath?: boolean } = {}) {
  const h = isolatedHome();
  const bin = join(h.root, "bin");
  mkdirSync(bin);
  if (options.onPath !== false) symlinkSync(FAKE_GH, join(bin, "gh"));
  const data = join(h.root, "gh-data");
  cpSync(FIXTURES, data, { recursive: true });
  const env: Env = {
    ...h.env,
    PATH: [bin, process.env.PATH ?? ""].join(delimiter),
    FAKE_GH_DIR: data,
    FAKE_GH_LOG: join(h.root, "gh.log"),
  };
  const db = stateFiles(defaultStateDir(h.env)).database;
  return {
    root: h.root,
    env,
    db,
    data,
    edit(file: string, change: (v: never) => unknown) {
      const path = join(data, file);
      writeFileSync(path, JSON.stringify(change(JSON.parse(readFileSync(path, "utf8")) as never)));
    },
    config(value: unknown) {
      const dir = join(h.env.XDG_CONFIG_HOME!, "ccmsg");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "config.json"), JSON.stringify(value));
    },
    ghLog: () => readFileSync(join(h.root, "gh.log"), "utf8"),
  };
}

function ok(r: { code: number | null; stdout: string; stderr: string }) {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Every work item, straight from SQLite. */
function items(db: string): Map<string, Item> {
  const d = new Database(db, { readonly: true });
  try {
    const rows = d.prepare("SELECT * FROM work_items ORDER BY id").all() as Record<
      string,
      string
    >[];
    return new Map(
      rows.map((r) => [r.id!, { ...r, metadata: JSON.parse(r.metadata!) } as unknown as Item]),
    );
  } finally {
    d.close();
  }
}

/** The board table's rows exactly as stored, for byte-for-byte comparison. */
function boardBytes(db: string): string {
  const d = new Database(db, { readonly: true });
  try {
    return JSON.stringify(d.prepare("SELECT * FROM work_items ORDER BY id").raw().all());
  } finally {
    d.close();
  }
}

/** A git repository whose origin is acme/widgets (the fixtures' repo). */
function widgetsRepo(root: string): string {
  const repo = join(root, "widgets");
  mkdirSync(repo);
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: root,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "T",
        GIT_AUTHOR_EMAIL: "t@example.invalid",
        GIT_COMMITTER_NAME: "T",
        GIT_COMMITTER_EMAIL: "t@example.invalid",
      },
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "widgets\n");
  git("add", ".");
  git("commit", "-q", "-m", "initial");
  git("remote", "add", "origin", "git@github.com:acme/widgets.git");
  return repo;
}

describe("ccmsg board sync github", () => {
  it("open PRs and issues become items: draft or DIRTY blocked, others needs-review; assignee owns, author is metadata", async () => {
    const g = ghHome();
    const text = await runCli(
      ["board", "sync", "github", "--repo", "acme/widgets", "--text"],
      g.env,
    );
    expect(text.code, text.stderr).toBe(0);
    // Progress, stage by stage, on stderr; the outcome on stdout.
    expect(text.stderr).toContain("github: reading acme/widgets: open pull requests, issues");
    expect(text.stderr).toContain("github: 5 open pull requests, 2 open issues, 3 recently closed");
    expect(text.stderr).toContain("github: writing");
    expect(text.stdout).toBe(
      "github sync of acme/widgets: 7 created, 0 updated, 0 closed, 0 unchanged, 0 retained\n",
    );
    const board = items(g.db);
    expect([...board.keys()]).toEqual([
      ISSUE(201),
      ISSUE(202),
      PR(101),
      PR(102),
      PR(103),
      PR(104),
      PR(105),
    ]);
    const row = (id: string) => board.get(id)!;
    expect(
      [101, 102, 103, 104, 105].map((n) => [n, row(PR(n)).status, row(PR(n)).priority]),
    ).toEqual([
      [101, "needs-review", "normal"],
      [102, "blocked", "high"], // draft
      [103, "blocked", "high"], // DIRTY
      [104, "needs-review", "normal"],
      [105, "needs-review", "normal"],
    ]);
    expect(row(ISSUE(201)).status).toBe("needs-review");
    // The author is never the owner; the assignee is.
    expect(row(PR(101))).toMatchObject({
      owner: null,
      source: "github",
      source_id: "acme/widgets#101",
    });
    expect(row(PR(101)).metadata).toMatchObject({
      repo: "acme/widgets",
      type: "pr",
      mergeStateStatus: "CLEAN",
      isDraft: false,
      headRefName: "feat/board-sync",
      sourceUpdatedAt: "2026-11-30T09:15:00Z",
      authorLogin: "hubot",
      syncedBy: "ecc-work-items-sync-github",
      reviewDecision: "APPROVED",
      checks: "pass",
    });
    expect(row(PR(104)).owner).toBe("mona");
    expect(row(PR(104)).metadata).toMatchObject({ authorLogin: "hubot", checks: "pending" });
    expect(row(ISSUE(201))).toMatchObject({
      owner: "octocat",
      url: "https://github.com/acme/widgets/issues/201",
    });
    expect(row(ISSUE(201)).metadata).toMatchObject({
      type: "issue",
      labels: ["bug"],
      authorLogin: "hubot",
    });
    // Merged and closed PRs never on the board are not added.
    expect(board.has(PR(90))).toBe(false);
    // Each list is one call with the fields it needs.
    const log = g.ghLog();
    expect(log).toContain(
      "pr list --repo acme/widgets --state open --limit 500 --json number,title,url,state,isDraft,mergeStateStatus,reviewDecision,statusCheckRollup,headRefName,baseRefName,updatedAt,assignees,author",
    );
    expect(log).toContain("issue list --repo acme/widgets --state open --limit 500 --json");
    expect(log).toContain("api graphql -f query=");
  });

  it("a re-sync keeps what a person set, ends merged and closed PRs, and closes a vanished one only when gh view confirms", async () => {
    const g = ghHome();
    ok(await runCli(["board", "sync", "github", "--repo", "acme/widgets", "--json"], g.env));
    // A person claims #105 and raises the issue's priority.
    ok(await runCli(["board", "claim", PR(105), "--owner", "alice", "--json"], g.env));
    ok(await runCli(["board", "update", ISSUE(201), "--priority", "critical", "--json"], g.env));
    const before = items(g.db);

    // GitHub moves on: #101 merged, #103 closed (gone from both lists), #202
    // missing from the list yet still open, #105 assigned to octocat and
    // retitled.
    g.edit("pr-list-open.json", (prs: Record<string, unknown>[]) =>
      prs
        .filter((p) => p.number !== 101 && p.number !== 103)
        .map((p) =>
          p.number === 105
            ? {
                ...p,
                title: "Read Linear projects and teams",
                assignees: [{ id: "MDQ6VXNlcjE=", login: "octocat", name: "The Octocat" }],
                updatedAt: "2026-11-30T11:00:00Z",
              }
            : p,
        ),
    );
    g.edit("pr-list-closed.json", (prs: Record<string, unknown>[]) => [
      {
        ...prs[0],
        number: 101,
        title: "Board: sync from GitHub",
        headRefName: "feat/board-sync",
        url: "https://github.com/acme/widgets/pull/101",
      },
      ...prs,
    ]);
    g.edit("issue-list-open.json", (issues: Record<string, unknown>[]) =>
      issues.filter((i) => i.number !== 202),
    );
    g.edit("views.json", () => ({ pr: { "103": "CLOSED" }, issue: { "202": "OPEN" } }));

    const r = ok(
      await runCli(["board", "sync", "github", "--repo", "acme/widgets", "--json"], g.env),
    );
    expect(r).toMatchObject({ ok: true, target: "acme/widgets" });
    expect((r.counts as Record<string, number>).closed).toBe(2);
    expect(r.retainedItems).toEqual([
      {
        id: ISSUE(202),
        reason: "gh issue view says OPEN: still open, though missing from the list",
      },
    ]);
    const after = items(g.db);
    expect(after.get(PR(101))!.status).toBe("done");
    expect(after.get(PR(103))!.status).toBe("closed");
    expect(after.get(ISSUE(202))!.status).toBe("needs-review");
    // The claim stands: owner, status and claim metadata; the title follows GitHub.
    expect(after.get(PR(105))).toMatchObject({
      owner: "alice",
      status: "running",
      title: "Read Linear projects and teams",
      created_at: before.get(PR(105))!.created_at,
    });
    expect(after.get(PR(105))!.metadata).toMatchObject({
      claimOwnerSource: "local",
      assignees: ["octocat"],
    });
    expect(after.get(ISSUE(201))!.priority).toBe("critical");
    // Views were asked only for what vanished from the lists.
    const log = g.ghLog();
    expect(log).toContain("pr view 103 --repo acme/widgets --json state");
    expect(log).toContain("issue view 202 --repo acme/widgets --json state");
    expect(log).not.toContain("pr view 101");

    // Nothing changed upstream: nothing is rewritten.
    const again = ok(
      await runCli(["board", "sync", "github", "--repo", "acme/widgets", "--json"], g.env),
    );
    expect(again.counts).toMatchObject({ created: 0, updated: 0, closed: 0 });
    expect(items(g.db).get(PR(104))!.updated_at).toBe(after.get(PR(104))!.updated_at);
  });

  it("through ECC_GH_SHIM (no gh on PATH): the HUD's queue and sync sections fill", async () => {
    const g = ghHome({ onPath: false });
    const env = { ...g.env, ECC_GH_SHIM: FAKE_GH };
    const repo = widgetsRepo(g.root);
    ok(await runCli(["board", "sync", "github", "--json"], env, undefined, { cwd: repo }));
    // The repository came from gh (repo view) in the working directory.
    expect(g.ghLog()).toContain("repo view --json nameWithOwner");

    const hud = ok(await runCli(["hud", "--json"], env, undefined, { cwd: repo }));
    const queue = hud.queueState as Record<string, unknown>;
    // No gh on PATH: the counts come from the sync, discussions from GraphQL.
    expect(queue.github).toMatchObject({ openPullRequests: 5, openIssues: 2, openDiscussions: 4 });
    const classes = Object.fromEntries(
      (queue.mergeQueue as { id: string; classification: string; reason: string }[]).map((m) => [
        m.id,
        [m.classification, m.reason],
      ]),
    );
    expect(classes).toEqual({
      [PR(101)]: ["ready", "approved"],
      [PR(102)]: ["blocked", "draft"],
      [PR(103)]: ["blocked", "conflicts with its base"],
      [PR(104)]: ["waiting-check", "checks running"],
      [PR(105)]: ["blocked", "changes requested"],
    });
    // #91's head never reached main; #92's did (compare: behind, ahead_by 0).
    expect(queue.staleSalvageQueue).toEqual([
      expect.objectContaining({ sourcePullRequest: 91, status: "stale", aheadBy: 2 }),
    ]);
    expect((hud.sync as Record<string, unknown>).GitHub).toEqual({
      repo: "acme/widgets",
      latestPullRequest: null,
    });
    // On a PR's branch, the sync names that PR (gh is not there to ask).
    execFileSync("git", ["-C", repo, "checkout", "-q", "-b", "feat/merge-queue"]);
    const onBranch = ok(await runCli(["hud", "--json"], env, undefined, { cwd: repo }));
    expect((onBranch.sync as Record<string, unknown>).GitHub).toEqual({
      repo: "acme/widgets",
      latestPullRequest: 104,
    });
  });

  it("gh not signed in: the failure is in status, the board is byte-for-byte unchanged, exit 1", async () => {
    const g = ghHome();
    ok(await runCli(["board", "sync", "github", "--repo", "acme/widgets", "--json"], g.env));
    ok(await runCli(["board", "claim", PR(101), "--owner", "alice", "--json"], g.env));
    const before = boardBytes(g.db);
    const r = await runCli(["board", "sync", "github", "--repo", "acme/widgets", "--text"], {
      ...g.env,
      FAKE_GH_UNAUTH: "1",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("github sync failed (recorded; the board is unchanged)");
    expect(r.stderr).toContain("gh auth login");
    expect(boardBytes(g.db)).toBe(before);
    const status = ok(await runCli(["status", "--json"], g.env));
    expect((status.sync as Record<string, Record<string, unknown>>).github).toMatchObject({
      source: "github",
      target: "acme/widgets",
      ok: false,
      counts: {},
    });
    expect(
      String((status.sync as Record<string, Record<string, unknown>>).github!.message),
    ).toMatch(/^gh (pr|issue) list failed: To get started with GitHub CLI/);
    const text = await runCli(["status", "--text"], g.env);
    expect(text.stdout).toMatch(
      /Sync github: acme\/widgets FAILED at \S+ — gh (pr|issue) list failed/,
    );
    // The facts of the last run that worked still serve the HUD.
    const hud = ok(await runCli(["hud", "--json"], g.env, undefined, { cwd: widgetsRepo(g.root) }));
    expect((hud.queueState as Record<string, unknown>).github).toMatchObject({
      openDiscussions: 4,
    });
  });
});

const PROJECT: FakeLinearProject = {
  id: "8f2b6a41-3c1d-4e5f-9a7b-1c2d3e4f5a6b",
  name: "Widgets v2",
  url: "https://linear.app/acme/project/widgets-v2-0a1b2c3d4e5f",
  health: "atRisk",
  lastUpdate: {
    id: "5e1a9b7c-2d3f-4a6b-8c9d-0e1f2a3b4c5d",
    createdAt: "2026-11-29T16:00:00.000Z",
    health: "atRisk",
  },
  issues: [
    {
      id: "b7a1c2d3-0000-4000-8000-000000000001",
      identifier: "WID-12",
      title: "Sync the board from Linear",
      url: "https://linear.app/acme/issue/WID-12/sync-the-board-from-linear",
      priority: 2,
      updatedAt: "2026-11-30T09:00:00.000Z",
      state: { name: "In Progress", type: "started" },
      assignee: { name: "mona@acme.example", displayName: "mona" },
    },
    {
      id: "b7a1c2d3-0000-4000-8000-000000000002",
      identifier: "WID-13",
      title: "Review the merge queue",
      url: "https://linear.app/acme/issue/WID-13/review-the-merge-queue",
      priority: 1,
      updatedAt: "2026-11-30T08:00:00.000Z",
      state: { name: "In Review", type: "started" },
      assignee: null,
    },
    {
      id: "b7a1c2d3-0000-4000-8000-000000000003",
      identifier: "WID-9",
      title: "Lanes",
      url: "https://linear.app/acme/issue/WID-9/lanes",
      priority: 0,
      updatedAt: "2026-11-20T08:00:00.000Z",
      state: { name: "Done", type: "completed" },
      assignee: null,
    },
    {
      id: "b7a1c2d3-0000-4000-8000-000000000004",
      identifier: "WID-20",
      title: "Webhook intake",
      url: "https://linear.app/acme/issue/WID-20/webhook-intake",
      priority: 4,
      updatedAt: "2026-11-18T08:00:00.000Z",
      state: { name: "Backlog", type: "backlog" },
      assignee: null,
    },
  ],
};

describe("ccmsg board sync linear", () => {
  let linear: FakeLinear;
  beforeAll(async () => {
    linear = await fakeLinear("lin_api_good", [PROJECT]);
  });
  afterAll(async () => {
    await linear.close();
  });

  it("a project's issues become items and its health and latest update reach the HUD", async () => {
    const g = ghHome();
    g.config({ sync: { linear: { project: "Widgets v2", endpoint: linear.url } } });
    const env = { ...g.env, LINEAR_API_KEY: "lin_api_good" };
    const text = await runCli(["board", "sync", "linear", "--text"], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('linear: finding project "Widgets v2"');
    expect(text.stdout).toBe(
      "linear sync of Widgets v2: 4 created, 0 updated, 0 closed, 0 unchanged, 0 retained\n",
    );
    // The key goes as the Authorization header itself (a personal key: no Bearer).
    expect(linear.requests.at(-1)!.headers.authorization).toBe("lin_api_good");
    const board = items(g.db);
    const view = (id: string) => {
      const i = board.get(id)!;
      return [i.status, i.priority, i.owner];
    };
    expect(view("linear-WID-12")).toEqual(["in-progress", "high", "mona"]);
    expect(view("linear-WID-13")).toEqual(["needs-review", "urgent", null]);
    expect(view("linear-WID-9")).toEqual(["done", null, null]);
    expect(view("linear-WID-20")).toEqual(["open", "low", null]);
    expect(board.get("linear-WID-12")).toMatchObject({
      source: "linear",
      url: "https://linear.app/acme/issue/WID-12/sync-the-board-from-linear",
    });

    const hud = ok(await runCli(["hud", "--json"], env, undefined, { cwd: g.root }));
    expect((hud.sync as Record<string, unknown>).Linear).toMatchObject({
      project: "Widgets v2",
      health: "atRisk",
      issueCapacityBlocked: null,
      latestStatusUpdateId: "5e1a9b7c-2d3f-4a6b-8c9d-0e1f2a3b4c5d",
    });
    const status = ok(await runCli(["status", "--json"], env));
    expect((status.sync as Record<string, Record<string, unknown>>).linear).toMatchObject({
      ok: true,
      target: "Widgets v2",
      counts: { created: 4 },
    });

    // An issue moved out of the project is left as it was, and said so.
    const moved = PROJECT.issues.splice(3, 1);
    try {
      const again = ok(await runCli(["board", "sync", "linear", "--json"], env));
      expect(again.retainedItems).toEqual([
        {
          id: "linear-WID-20",
          reason: "no longer in the project (moved, archived or deleted in Linear); left as it was",
        },
      ]);
      expect(again.counts).toMatchObject({ created: 0, updated: 0, unchanged: 3, retained: 1 });
      expect(items(g.db).get("linear-WID-20")!.status).toBe("open");
    } finally {
      PROJECT.issues.push(...moved);
    }
  });

  it("a bad key (401) or a GraphQL error is recorded; the board is unchanged; the key is never shown", async () => {
    const g = ghHome();
    g.config({
      sync: { linear: { project: PROJECT.id, endpoint: linear.url, token_env: "ACME_LINEAR" } },
    });
    ok(
      await runCli(["board", "sync", "linear", "--json"], {
        ...g.env,
        ACME_LINEAR: "lin_api_good",
      }),
    );
    ok(await runCli(["board", "move", "linear-WID-20", "running", "--json"], g.env));
    const before = boardBytes(g.db);

    const bad = await runCli(["board", "sync", "linear", "--json"], {
      ...g.env,
      ACME_LINEAR: "lin_api_wrong",
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).not.toContain("lin_api_wrong");
    expect(JSON.parse(bad.stderr).error.msg).toContain(
      "Linear answered HTTP 401: Authentication required, not authenticated (check the API key)",
    );
    expect(boardBytes(g.db)).toBe(before);
    let status = ok(await runCli(["status", "--json"], g.env));
    expect((status.sync as Record<string, Record<string, unknown>>).linear).toMatchObject({
      ok: false,
      message: expect.stringContaining("HTTP 401"),
    });

    // A project id Linear does not know: GraphQL `errors`.
    const missing = await runCli(
      ["board", "sync", "linear", "--project", "00000000-0000-4000-8000-000000000000", "--json"],
      { ...g.env, ACME_LINEAR: "lin_api_good" },
    );
    expect(missing.code).toBe(1);
    expect(boardBytes(g.db)).toBe(before);
    status = ok(await runCli(["status", "--json"], g.env));
    expect((status.sync as Record<string, Record<string, unknown>>).linear!.message).toBe(
      "Linear GraphQL error: Entity not found: Project",
    );

    // Nobody listening: the network failure is recorded too.
    g.config({
      sync: {
        linear: {
          project: PROJECT.id,
          endpoint: "http://127.0.0.1:9/graphql",
          token_env: "ACME_LINEAR",
        },
      },
    });
    const down = await runCli(["board", "sync", "linear", "--json"], {
      ...g.env,
      ACME_LINEAR: "lin_api_good",
    });
    expect(down.code).toBe(1);
    expect(JSON.parse(down.stderr).error.msg).toContain(
      "cannot reach Linear at http://127.0.0.1:9/graphql",
    );
    expect(boardBytes(g.db)).toBe(before);
    // The person's move survived every failure; the HUD keeps the last good facts.
    expect(items(g.db).get("linear-WID-20")!.status).toBe("running");
    const text = await runCli(["status", "--text"], g.env);
    expect(text.stdout).toMatch(/Sync linear: .* FAILED at \S+ — cannot reach Linear/);
  });
});

describe("ccmsg board sync linear --create: workspace issue capacity", () => {
  it("a create refused for the usage limit sets issueCapacityBlocked; a create that works clears it", async () => {
    const project: FakeLinearProject = structuredClone(PROJECT);
    const workspace = { issueLimit: project.issues.length + 1 };
    const fake = await fakeLinear("lin_api_good", [project], workspace);
    try {
      const g = ghHome();
      g.config({ sync: { linear: { project: "Widgets v2", endpoint: fake.url } } });
      const env = { ...g.env, LINEAR_API_KEY: "lin_api_good" };
      const capacity = async () => {
        const hud = ok(await runCli(["hud", "--json"], env, undefined, { cwd: g.root }));
        return (hud.sync as Record<string, Record<string, unknown> | undefined>).Linear
          ?.issueCapacityBlocked;
      };
      // Only reading: Linear never said, so the HUD does not know.
      ok(await runCli(["board", "sync", "linear", "--json"], env));
      expect(await capacity()).toBeNull();

      // Room for one more: created in the project's team, read back onto the board.
      const made = await runCli(
        ["board", "sync", "linear", "--create", "Ship the HUD", "--text"],
        env,
      );
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toMatch(/^created WID-\d+ in Linear\n/);
      const create = fake.requests.find((r) => /issueCreate/.test(r.body.query))!;
      expect(create.body.variables).toEqual({
        input: { teamId: "team-wid", projectId: project.id, title: "Ship the HUD" },
      });
      expect([...items(g.db).values()].map((i) => i.title)).toContain("Ship the HUD");
      expect(await capacity()).toBe(false);

      // The workspace is full: Linear's refusal is reported, the sync itself ran.
      const refused = await runCli(
        ["board", "sync", "linear", "--create", "One too many", "--json"],
        env,
      );
      expect(refused.code).toBe(1);
      const e = JSON.parse(refused.stderr).error as { code: string; msg: string };
      expect(e.msg).toContain("the workspace's issue capacity is reached");
      expect(e.msg).toContain(USAGE_LIMIT_REFUSAL.errors[0]!.extensions.userPresentableMessage);
      expect(await capacity()).toBe(true);
      const status = ok(await runCli(["status", "--json"], env));
      expect((status.sync as Record<string, Record<string, unknown>>).linear).toMatchObject({
        ok: true,
      });
      const text = await runCli(["hud", "--text"], env, undefined, { cwd: g.root });
      expect(text.stdout).toContain("issue creation blocked: workspace capacity");

      // A sync that creates nothing keeps what Linear last said.
      ok(await runCli(["board", "sync", "linear", "--json"], env));
      expect(await capacity()).toBe(true);

      // Capacity freed (a plan upgrade): the next create works and clears it.
      workspace.issueLimit = 1000;
      ok(await runCli(["board", "sync", "linear", "--create", "After the upgrade", "--json"], env));
      expect(await capacity()).toBe(false);
    } finally {
      await fake.close();
    }
  });
});
