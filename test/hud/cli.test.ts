import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import {
  defaultStateDir,
  isolatedHome,
  ROOT,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { seedStore, statuslineInput, TODOS, todoFile } from "./fixtures.js";
import {
  conflict,
  fakeGh,
  git,
  hudProblems,
  isMissing,
  makeRepo,
  runIn,
  script,
  stripAnsi,
  tempDir,
  toolsDir,
} from "./helpers.js";

// The built command (`npm run build` first), run as the harness and a person
// run it: real git repositories, a fake gh and claude where needed.

const SID = "5b0c2a6e-2d8e-4c1f-9a37-0f7d1e2b3c4d";

/** An isolated home: state and config under it, PATH as given. */
function home(path = process.env.PATH ?? "") {
  const h = isolatedHome();
  const tmp = join(h.root, "tmp");
  mkdirSync(tmp);
  const env: Record<string, string> = { ...h.env, PATH: path, TMPDIR: tmp };
  const configDir = join(requiredPath(h.env, "XDG_CONFIG_HOME"), "ccmsg");
  return {
    root: h.root,
    env,
    stateDir: defaultStateDir(h.env),
    claude: requiredPath(h.env, "CLAUDE_CONFIG_DIR"),
    config(value: unknown) {
      mkdirSync(configDir, { recursive: true });
      const path = join(configDir, "config.json");
      writeFileSync(path, JSON.stringify(value));
      return path;
    },
  };
}

function json(r: { stdout: string; stderr: string; code: number | null }): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function refusal(r: { stdout: string; stderr: string; code: number | null }) {
  expect(r.code).toBe(1);
  return (JSON.parse(r.stderr) as { error: { code: string; msg: string } }).error;
}

describe("ccmsg statusline", () => {
  it("prints one line: model │ task │ cost duration lines │ dir, and the used-context bar", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    todoFile(h.claude, SID, TODOS);
    const input = statuslineInput(SID, repo, { context_window: { remaining_percentage: 62 } });
    const r = await runIn(["statusline"], h.env, { stdin: JSON.stringify(input) });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(stripAnsi(r.stdout)).toBe(
      "Opus │ Wiring the claim button │ $0.84 1h12m +120/-30 │ widgets ████░░░░░░ 46%\n",
    );
    // The input is kept for the HUD, in a private directory.
    const recorded = join(h.stateDir, "statusline", `${SID}.json`);
    expect(JSON.parse(readFileSync(recorded, "utf8"))).toEqual(input);
  });

  it("garbage, a non-object or an oversized input: empty output, exit 0", async () => {
    const h = home();
    for (const stdin of ["not json {", "[1,2,3]", "", `{"x":"${"a".repeat(1100 * 1024)}"}`]) {
      const r = await runIn(["statusline"], h.env, { stdin });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 0,
        stdout: "",
        stderr: "",
      });
    }
    expect(existsSync(join(h.stateDir, "statusline"))).toBe(false);
  });

  it("stdin that never completes: gives up silently and exits 0", async () => {
    const h = home();
    const started = Date.now();
    const r = await runIn(["statusline"], h.env, { stdin: '{"session_id":', keepStdinOpen: true });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("ccmsg hud", () => {
  it("--json: a valid payload whose context comes from the statusline input and git", async () => {
    const h = home();
    const repo = makeRepo(h.root, "widgets-board");
    git(repo, "checkout", "-q", "-b", "feat/board");
    const input = statuslineInput(SID, repo, { context_window: { remaining_percentage: 62 } });
    expect((await runIn(["statusline"], h.env, { stdin: JSON.stringify(input) })).code).toBe(0);
    const out = join(h.root, "out", "deep", "hud.json");
    // Run from elsewhere: the session's directory comes from its input.
    const r = await runIn(["hud", "--json", "--sid", SID, "--write", out], h.env, {
      cwd: tempDir(),
    });
    const payload = json(r);
    expect(hudProblems(payload)).toEqual([]);
    expect(payload.context).toEqual({
      harness: "claude-code",
      model: "Opus",
      repo: "acme/widgets",
      branch: "feat/board",
      worktree: repo,
      sessionId: SID,
      contextWindow: { remainingPct: 62, pressure: "normal" },
    });
    expect(payload.cost).toEqual({
      sessionUsd: 0.84,
      budgetUsd: null,
      trend: "unknown",
      tokens: null,
    });
    expect(readFileSync(out, "utf8")).toBe(r.stdout);
  });

  it("no session and no data: every section missing-valued, none shown as healthy", async () => {
    const h = home(toolsDir(["git"]));
    const r = await runIn(["hud", "--json"], h.env, { cwd: tempDir() });
    const payload = json(r);
    expect(hudProblems(payload)).toEqual([]);
    const { schema_version, generatedAt, context, sessionControls, ...sections } = payload;
    for (const [name, value] of Object.entries(sections))
      expect({ name, missing: isMissing(value) }).toEqual({ name, missing: true });
    expect(isMissing({ ...(context as object), sessionId: null })).toBe(true);
    expect(payload.risk).toMatchObject({ status: "unknown" });
    expect(sessionControls).toMatchObject({ supported: ["status"] });
    // Read as text, nothing claims to be fine.
    const text = await runIn(["hud", "--text"], h.env, { cwd: tempDir() });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("risk      unavailable");
    expect(text.stdout).toContain("todos     unavailable");
    expect(text.stdout).toContain("✗ pr: not in a git repository");
    expect(text.stdout).not.toMatch(/\bok\b|pass|healthy/);
  });

  it("--sid of a session nothing here knows is refused as such, not shown as empty", async () => {
    const h = home();
    const ghost = "0f0f0f0f-0000-4000-8000-000000000000";
    for (const args of [
      ["hud", "--sid", ghost],
      ["queue", "merge", "--sid", ghost],
    ]) {
      const e = refusal(await runIn(args, h.env, { cwd: tempDir() }));
      expect({ args, code: e.code }).toEqual({ args, code: "session_not_found" });
      expect(e.msg).toContain(`no session ${ghost} is known here`);
    }
    // Its statusline once recorded, the session is known.
    const repo = makeRepo(h.root);
    await runIn(["statusline"], h.env, { stdin: JSON.stringify(statuslineInput(ghost, repo)) });
    const known = await runIn(["hud", "--json", "--sid", ghost], h.env, { cwd: tempDir() });
    expect(json(known).context).toMatchObject({ sessionId: ghost });
  });

  it("a wrong config key is refused, naming the file and the key", async () => {
    const h = home();
    const path = h.config({ budget: 5 });
    const e = refusal(await runIn(["hud", "--json"], h.env, { cwd: tempDir() }));
    expect(e.code).toBe("invalid_args");
    expect(e.msg).toContain(path);
    expect(e.msg).toContain("budget: unknown key");
  });
});

describe("ccmsg check run", () => {
  it("runs the configured checks in the repository root, records them, and the HUD shows them", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    mkdirSync(join(repo, "sub"));
    h.config({
      checks: [
        { name: "unit", command: "test -f README.md && echo ok" },
        { name: "lint", command: "echo 'lint: 2 problems' >&2; exit 3" },
      ],
    });
    const r = await runIn(["check", "run", "--json"], h.env, { cwd: join(repo, "sub") });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { passed: boolean; results: Record<string, unknown>[] };
    expect(report.passed).toBe(false);
    expect(report.results).toMatchObject([
      { name: "unit", status: "pass", exitCode: 0, repoRoot: repo },
      { name: "lint", status: "fail", exitCode: 3, outputTail: "lint: 2 problems\n" },
    ]);
    const hud = json(await runIn(["hud", "--json"], h.env, { cwd: repo }));
    expect(hud.checks).toMatchObject({
      local: [
        { command: "test -f README.md && echo ok", status: "pass" },
        { command: "echo 'lint: 2 problems' >&2; exit 3", status: "fail" },
      ],
    });

    // Text mode: progress on stderr, one check by name, exit 0 when it passes.
    const one = await runIn(["check", "run", "--text", "--name", "unit"], h.env, { cwd: repo });
    expect(one.code).toBe(0);
    expect(one.stderr).toContain("▶ unit: test -f README.md && echo ok");
    expect(one.stderr).toMatch(/✔ unit pass in \d+\.\ds/);
    expect(one.stdout).toContain("pass  unit");

    const unknown = refusal(await runIn(["check", "run", "--name", "nope"], h.env, { cwd: repo }));
    expect(unknown).toMatchObject({
      code: "invalid_args",
      msg: expect.stringContaining("unit, lint"),
    });
  });

  it("without checks configured it says how to add them", async () => {
    const h = home();
    const e = refusal(await runIn(["check", "run"], h.env, { cwd: makeRepo(h.root) }));
    expect(e.code).toBe("invalid_args");
    expect(e.msg).toContain('"checks"');
  });
});

describe("ccmsg session", () => {
  it("create: a new worktree on a new branch beside the repository; diff shows its changes", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    const created = json(
      await runIn(["session", "create", "feat-x", "--json"], h.env, { cwd: repo }),
    );
    expect(created).toEqual({ path: `${repo}-feat-x`, branch: "feat-x", base: "main" });
    expect(git(`${repo}-feat-x`, "branch", "--show-current").trim()).toBe("feat-x");
    const again = refusal(await runIn(["session", "create", "feat-x"], h.env, { cwd: repo }));
    expect(again.code).toBe("invalid_args");

    const wt = `${repo}-feat-x`;
    writeFileSync(join(wt, "f.txt"), "edited\n");
    writeFileSync(join(wt, "new.txt"), "hello\n");
    const d = json(await runIn(["session", "diff", "--json"], h.env, { cwd: wt }));
    expect(d.worktree).toBe(wt);
    expect(d.branch).toBe("feat-x");
    expect(d.stat).toMatch(/f\.txt \| 2 \+-/);
    expect(d.diff).toContain("+edited");
    expect(d.untracked).toEqual(["new.txt"]);
    const clean = await runIn(["session", "diff", "--text"], h.env, { cwd: repo });
    expect(clean.stdout).toBe("no changes\n");
  });

  it("create and diff outside a repository: refused with the HUD's reason", async () => {
    const h = home();
    const dir = tempDir();
    const e = refusal(await runIn(["session", "create", "x"], h.env, { cwd: dir }));
    expect(e).toEqual({ code: "capability_unavailable", msg: "create: not in a git repository" });
    const hud = json(await runIn(["hud", "--json"], h.env, { cwd: dir }));
    expect(hud.sessionControls).toMatchObject({
      blocked: expect.arrayContaining([{ control: "create", reason: "not in a git repository" }]),
    });
  });

  it("resume prints the exact command when claude is installed, and is blocked otherwise", async () => {
    const bin = toolsDir(["git"]);
    const h = home(bin);
    const repo = makeRepo(h.root);
    await runIn(["statusline"], h.env, { stdin: JSON.stringify(statuslineInput(SID, repo)) });
    const blocked = refusal(await runIn(["session", "resume", "--sid", SID], h.env));
    expect(blocked).toEqual({
      code: "capability_unavailable",
      msg: "resume: claude CLI not installed",
    });
    const hud = json(await runIn(["hud", "--json", "--sid", SID], h.env));
    expect(hud.sessionControls).toMatchObject({
      blocked: expect.arrayContaining([{ control: "resume", reason: "claude CLI not installed" }]),
    });

    script(bin, "claude", "exit 0");
    // No tmux here: the exact command (with the session's config home), and why.
    const r = json(await runIn(["session", "resume", "--sid", SID, "--json"], h.env));
    expect(r).toMatchObject({
      sid: SID,
      cwd: repo,
      argv: ["claude", "--resume", SID],
      launched: false,
      why: "tmux is not installed",
    });
    expect(r.command).toBe(`cd ${repo} && CLAUDE_CONFIG_DIR=${h.claude} claude --resume ${SID}`);
  });

  it("pr: the branch's pull request through gh; blocked without gh", async () => {
    const bin = toolsDir(["git", "cat"]);
    const h = home(bin);
    const repo = makeRepo(h.root);
    const none = refusal(await runIn(["session", "pr"], h.env, { cwd: repo }));
    expect(none).toEqual({ code: "capability_unavailable", msg: "pr: gh not installed" });

    fakeGh(bin, {
      pr: {
        number: 42,
        title: "Wire the board",
        state: "OPEN",
        url: "https://github.com/acme/widgets/pull/42",
        isDraft: true,
        mergeStateStatus: "CLEAN",
        reviewDecision: "REVIEW_REQUIRED",
      },
    });
    const r = await runIn(["session", "pr", "--text"], h.env, { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      "#42 Wire the board (OPEN, draft)\nhttps://github.com/acme/widgets/pull/42\nmerge state: CLEAN, review: REVIEW_REQUIRED\n",
    );
  });

  describe("stop", () => {
    let inst: TestInstance;
    beforeAll(async () => {
      inst = await startInstance();
    });
    afterAll(async () => {
      await inst.stop();
    });

    it("run as the session itself it declares stopping; from anyone else it needs a running process", async () => {
      const env = { ...inst.env, PATH: process.env.PATH, CCMSG_STATE_DIR: inst.stateDir };
      // The session is known (it greeted); the caller is someone else.
      expect((await runIn(["hello", "--sid", SID], env)).code).toBe(0);
      const other = refusal(
        await runIn(["session", "stop", "--sid", SID], {
          ...env,
          CLAUDE_CODE_SESSION_ID: "someone-else",
        }),
      );
      expect(other).toEqual({
        code: "capability_unavailable",
        msg: `stop: no running Claude Code process of session ${SID}: no state file in ${inst.env.CLAUDE_CONFIG_DIR}/sessions names a process of it that still runs`,
      });
      const r = json(
        await runIn(["session", "stop", "--json", "--reason", "done"], {
          ...env,
          CLAUDE_CODE_SESSION_ID: SID,
        }),
      );
      expect(r).toMatchObject({ sid: SID, outcome: "completed", stopped_at: expect.any(Number) });
    });
  });
});

describe("ccmsg queue", () => {
  it("merge and conflict: the board's gated items, conflicted worktrees and DIRTY PRs", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    conflict(repo);
    seedStore(h.stateDir, {
      items: [
        {
          id: "pr-1",
          status: "blocked",
          metadata: { mergeStateStatus: "DIRTY" },
          url: "https://github.com/acme/widgets/pull/1",
        },
        { id: "task-2", status: "running", metadata: { mergeGate: "waiting-checks" } },
        { id: "task-3", status: "open" },
      ],
    });
    const merge = json(await runIn(["queue", "merge", "--json"], h.env, { cwd: repo }));
    expect((merge.mergeQueue as { id: string }[]).map((i) => i.id)).toEqual(["task-2", "pr-1"]);
    const conflicts = json(await runIn(["queue", "conflict", "--json"], h.env, { cwd: repo }));
    expect(conflicts.conflictQueue).toEqual([
      { kind: "worktree", path: repo, branch: "main", conflicts: 1 },
      {
        kind: "work-item",
        id: "pr-1",
        title: "Item pr-1",
        mergeStateStatus: "DIRTY",
        url: "https://github.com/acme/widgets/pull/1",
      },
    ]);
    const text = await runIn(["queue", "conflict", "--text"], h.env, { cwd: repo });
    expect(text.stdout).toContain(`worktree  ${repo} (main): 1 conflicted path`);
    // The HUD shows the same queues.
    const hud = json(await runIn(["hud", "--json"], h.env, { cwd: repo }));
    expect((hud.queueState as Record<string, unknown>).conflictQueue).toEqual(
      conflicts.conflictQueue,
    );
  });

  it("merge without any work-item store is blocked with the HUD's reason", async () => {
    const h = home();
    const e = refusal(await runIn(["queue", "merge"], h.env, { cwd: makeRepo(h.root) }));
    expect(e).toEqual({
      code: "capability_unavailable",
      msg: "mergeQueue: no work items recorded (no state store yet)",
    });
  });
});

// Read at a glance (issue 8, item 24). The statusline inputs are copies of
// the shapes in shared/fixtures/claude-code/statusline.
const SHAPES = join(ROOT, "test", "fixtures", "claude-code", "statusline");
const shape = (name: string) => readFileSync(join(SHAPES, `${name}.json`), "utf8");

describe("what a person reads", () => {
  it("the statusline warns when the session is over 200k tokens and no context window is given", async () => {
    const h = home();
    const lines: Record<string, string> = {};
    for (const name of ["exceeds-200k-no-window", "full", "minimal"]) {
      const r = await runIn(["statusline"], h.env, { stdin: shape(name) });
      expect({ name, code: r.code, stderr: r.stderr }).toEqual({ name, code: 0, stderr: "" });
      lines[name] = stripAnsi(r.stdout);
    }
    expect(lines).toEqual({
      "exceeds-200k-no-window": "Opus 4.5 │ $1.87 45m +214/-37 │ widgets ⚠ over 200k tokens\n",
      full: "Opus 4.5 │ $1.87 45m +214/-37 │ widgets ███████░░░ 73%\n",
      minimal: "Sonnet 4.5 │ widgets\n",
    });
  });

  it("the statusline honours NO_COLOR (set and not empty)", async () => {
    const h = home();
    const plain = await runIn(
      ["statusline"],
      { ...h.env, NO_COLOR: "1" },
      { stdin: shape("full") },
    );
    expect(plain.stdout).toBe("Opus 4.5 │ $1.87 45m +214/-37 │ widgets ███████░░░ 73%\n");
    const warned = await runIn(
      ["statusline"],
      { ...h.env, NO_COLOR: "1" },
      {
        stdin: shape("exceeds-200k-no-window"),
      },
    );
    expect(warned.stdout).not.toContain("\x1b[");
    const coloured = await runIn(
      ["statusline"],
      { ...h.env, NO_COLOR: "" },
      { stdin: shape("full") },
    );
    expect(coloured.stdout).toContain("\x1b[");
  });

  it("the HUD text names checks, and says plainly what it knows of cost and budget", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    const checks = [
      { name: "unit", command: "true" },
      { name: "lint", command: "exit 3" },
    ];
    h.config({ checks });
    await runIn(["check", "run"], h.env, { cwd: repo });
    const row = (text: string, label: string) =>
      text.split("\n").find((l) => l.startsWith(`${label} `)) ?? "";

    const none = await runIn(["hud", "--text"], h.env, { cwd: repo });
    expect(none.code, none.stderr).toBe(0);
    expect(row(none.stdout, "checks")).toBe("checks    local: unit pass, lint fail");
    expect(row(none.stdout, "cost")).toBe("cost      unavailable");

    await runIn(["statusline"], h.env, { stdin: JSON.stringify(statuslineInput(SID, repo)) });
    const spent = await runIn(["hud", "--text", "--sid", SID], h.env, { cwd: repo });
    expect(row(spent.stdout, "cost")).toBe("cost      $0.84 this session (no budget set)");
    expect(spent.stdout).not.toMatch(/unavailable \(unavailable\)/);

    h.config({ checks, budget_usd: 5 });
    const budgeted = await runIn(["hud", "--text", "--sid", SID], h.env, { cwd: repo });
    expect(row(budgeted.stdout, "cost")).toBe("cost      $0.84 of $5.00 budget (within-budget)");
  });
});
