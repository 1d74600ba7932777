import { cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SESSION_CONTROLS } from "../../src/contract/ecc/hud.js";
import { collectHud } from "../../src/hud/collect.js";
import { ROOT } from "../helpers/instance.js";
import { recordInput, seedStore, statuslineInput, TODOS, todoFile } from "./fixtures.js";
import {
  fakeGh,
  git,
  hudProblems,
  isMissing,
  makeRepo,
  pathOf,
  script,
  tempDir,
  toolsDir,
} from "./helpers.js";

const SID = "5b0c2a6e-2d8e-4c1f-9a37-0f7d1e2b3c4d";
const OTHER = "0c7e1d2b-3a4f-4b5c-8d6e-7f8091a2b3c4";
const EXPIRES = Date.now() + 3_600_000;

/** A reservation entry (DR-0041) in KV namespace `reservations`. */
function reservation(sid: string, glob: string, reason: string, inMs: number, name?: string) {
  const expires_at = inMs > 0 ? EXPIRES : Date.now() + inMs;
  return {
    ns: "reservations",
    key: `${sid}:${reason}`,
    value: {
      v: 1,
      glob,
      holder: name === undefined ? { sid } : { sid, name },
      exclusive: true,
      reason,
      created_at: 0,
      expires_at,
    },
  };
}

/** A session working in a dirty repository, with everything a HUD can read:
 * mirrored session, statusline input, todos, ECC's bridge, check runs, work
 * items, config, handoff file, a signed-in gh and the claude CLI. */
function richSetup() {
  const root = tempDir();
  const repo = makeRepo(root);
  writeFileSync(join(repo, "f.txt"), "edited\n");
  const stateDir = join(root, "state");
  const claudeHome = join(root, "claude");
  const home = join(root, "home");
  const bridgeDir = join(root, "tmp");
  mkdirSync(bridgeDir);
  mkdirSync(join(home, "handoffs"), { recursive: true });
  seedStore(stateDir, {
    sessions: [
      {
        sid: SID,
        instance: "0".repeat(32),
        state: "active",
        cwd: repo,
        repo_root: repo,
        branch: "main",
        model: "claude-opus-4-1",
        transcript_path: join(claudeHome, "projects", "x", `${SID}.jsonl`),
        connected_at: Date.now() - 60_000,
      },
    ],
    items: [
      {
        id: "pr-1",
        status: "blocked",
        metadata: { type: "pr", mergeStateStatus: "DIRTY" },
        url: "https://github.com/acme/widgets/pull/1",
      },
      { id: "pr-2", status: "needs-review", metadata: { type: "pr", mergeStateStatus: "CLEAN" } },
      { id: "task-3", status: "running", metadata: { mergeGate: "waiting-checks" } },
      { id: "pr-4", status: "merged", metadata: { mergeStateStatus: "DIRTY" } },
      { id: "task-5", status: "open" },
    ],
    runs: [
      { repoRoot: repo, name: "test", command: "npm test", status: "fail" },
      { repoRoot: repo, name: "test", command: "npm test", status: "pass" },
      { repoRoot: "/elsewhere", name: "lint", command: "npm run lint", status: "fail" },
    ],
    // File reservations: the session's own, another's in its worktree, one
    // elsewhere and one expired (neither shown).
    kv: [
      reservation(SID, `${repo}/src/**`, "own", 3_600_000),
      reservation(OTHER, `${repo}/docs/*.md`, "docs", 3_600_000, "docs-ws"),
      reservation(OTHER, "/elsewhere/**", "far", 3_600_000),
      reservation(OTHER, `${repo}/**`, "old", -1000),
    ],
  });
  recordInput(stateDir, statuslineInput(SID, repo));
  todoFile(claudeHome, SID, TODOS);
  writeFileSync(join(bridgeDir, `ecc-metrics-${SID}.json`), JSON.stringify({ tool_count: 18 }));
  // The handoff names the commit checked out: written after the latest batch.
  const head = git(repo, "rev-parse", "--short", "HEAD").trim();
  writeFileSync(join(home, "handoffs", "widgets.md"), `# handoff\n\n**Commit:** ${head}\n`);
  const configPath = join(root, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      checks: [
        { name: "test", command: "npm test" },
        { name: "lint", command: "npm run lint" },
      ],
      budget_usd: 5,
      handoff_path: "~/handoffs/widgets.md",
      linear: { project: "Widgets" },
    }),
  );
  const bin = fakeGh(tempDir(), {
    pr: { number: 42 },
    checks: { json: [{ name: "ci / test", bucket: "pass", link: "https://ci/1" }] },
    prs: 3,
    issues: 7,
  });
  script(bin, "claude", "exit 0");
  const env = {
    PATH: pathOf(bin, process.env.PATH ?? ""),
    HOME: home,
    CLAUDE_CODE_SESSION_ID: SID,
  };
  return { root, repo, stateDir, claudeHome, bridgeDir, configPath, env, bin };
}

describe("the HUD payload", () => {
  it("fills every section from its real source", async () => {
    const s = richSetup();
    const { payload } = await collectHud({
      stateDir: s.stateDir,
      configPath: s.configPath,
      env: s.env,
      claudeHome: s.claudeHome,
      bridgeDir: s.bridgeDir,
    });
    expect(hudProblems(payload)).toEqual([]);
    expect(payload.schema_version).toBe("ecc.hud-status.v1");
    expect(payload.context).toEqual({
      harness: "claude-code",
      model: "Opus",
      repo: "acme/widgets",
      branch: "main",
      worktree: s.repo,
      sessionId: SID,
      contextWindow: { remainingPct: 41, pressure: "elevated" },
    });
    expect(payload.toolCalls).toEqual({ total: 18, pending: null, stale: null, lastTool: null });
    expect(payload.activeAgents).toBe("unknown");
    expect(payload.todos).toEqual({
      inProgress: "Wiring the claim button",
      counts: { pending: 2, inProgress: 1, completed: 1 },
    });
    expect(payload.checks).toEqual({
      local: [
        { command: "npm test", status: "pass" },
        // Configured, never run here: unknown, not green.
        { command: "npm run lint", status: "unknown" },
      ],
      remote: [{ name: "ci / test", status: "pass", url: "https://ci/1" }],
    });
    expect(payload.cost).toEqual({
      sessionUsd: 0.84,
      budgetUsd: 5,
      trend: "within-budget",
      // No transcript at the announced path: no token counts.
      tokens: null,
    });
    const expiresAt = new Date(EXPIRES).toISOString();
    expect(payload.risk).toEqual({
      status: "attention",
      reasons: [
        "dirty worktree",
        "2 blocked work items",
        "1 work item needs review",
        `1 path reserved by other sessions: ${s.repo}/docs/*.md (docs-ws)`,
      ],
      dirtyWorktree: true,
      conflicts: 0,
      manualReviewRequired: true,
      reservations: {
        held: [
          {
            glob: `${s.repo}/src/**`,
            holder: SID,
            holderName: null,
            exclusive: true,
            reason: "own",
            expiresAt,
          },
        ],
        others: [
          {
            glob: `${s.repo}/docs/*.md`,
            holder: OTHER,
            holderName: "docs-ws",
            exclusive: true,
            reason: "docs",
            expiresAt,
          },
        ],
      },
    });
    expect(payload.queueState).toEqual({
      github: { openPullRequests: 3, openIssues: 7, openDiscussions: null },
      mergeQueue: [
        expect.objectContaining({ id: "task-3", lane: "running", mergeGate: "waiting-checks" }),
        expect.objectContaining({ id: "pr-2", lane: "blocked", mergeGate: "CLEAN" }),
        expect.objectContaining({ id: "pr-1", lane: "blocked", mergeGate: "DIRTY" }),
      ],
      conflictQueue: [
        expect.objectContaining({ kind: "work-item", id: "pr-1", mergeStateStatus: "DIRTY" }),
      ],
      staleSalvageQueue: [],
    });
    expect(payload.sessionControls).toEqual({ supported: [...SESSION_CONTROLS], blocked: [] });
    expect(payload.sync).toEqual({
      Linear: {
        project: "Widgets",
        health: "unknown",
        issueCapacityBlocked: null,
        latestStatusUpdateId: null,
      },
      GitHub: { repo: "acme/widgets", latestPullRequest: 42 },
      handoff: { path: "~/handoffs/widgets.md", written: true },
    });
  });

  it("over budget, unauthenticated gh: trend says so, GitHub signals go unknown", async () => {
    const s = richSetup();
    writeFileSync(s.configPath, JSON.stringify({ budget_usd: 0.5 }));
    fakeGh(s.bin, { authenticated: false });
    const { payload } = await collectHud({
      stateDir: s.stateDir,
      configPath: s.configPath,
      env: s.env,
      claudeHome: s.claudeHome,
      bridgeDir: s.bridgeDir,
    });
    expect(hudProblems(payload)).toEqual([]);
    expect(payload.cost).toMatchObject({ trend: "over-budget" });
    expect(payload.queueState).toMatchObject({ github: "unknown" });
    expect(payload.checks).toMatchObject({ remote: "unknown" });
    expect(payload.sync).toMatchObject({
      GitHub: { repo: "acme/widgets", latestPullRequest: null },
    });
    expect(payload.sessionControls).toMatchObject({
      blocked: [{ control: "pr", reason: "gh not authenticated" }],
    });
  });

  it("a session nobody knows anything about: every signal missing, nothing shown healthy", async () => {
    const root = tempDir();
    const nowhere = join(root, "not-a-repo");
    mkdirSync(nowhere);
    const { payload } = await collectHud({
      stateDir: join(root, "state"),
      configPath: join(root, "config.json"),
      flagSid: "ghost",
      env: { PATH: toolsDir(["git"]), HOME: root },
      cwd: nowhere,
      claudeHome: join(root, "claude"),
      bridgeDir: root,
    });
    expect(hudProblems(payload)).toEqual([]);
    const { sessionControls, context, ...rest } = payload;
    for (const [name, value] of Object.entries(rest)) {
      if (name === "schema_version" || name === "generatedAt") continue;
      expect({ name, missing: isMissing(value) }).toEqual({ name, missing: true });
    }
    // Only the id that was asked for is known.
    expect(context).toMatchObject({ sessionId: "ghost", harness: "unknown" });
    expect(isMissing({ ...(context as object), sessionId: null })).toBe(true);
    expect(payload.risk).toMatchObject({ status: "unknown" });
    expect(sessionControls).toEqual({
      supported: ["status"],
      blocked: [
        { control: "create", reason: "not in a git repository" },
        { control: "resume", reason: "the session's directory is unknown" },
        {
          control: "stop",
          reason: `no running Claude Code process of session ghost: no state file in ${join(root, ".claude", "sessions")} names a process of it that still runs`,
        },
        { control: "diff", reason: "not in a git repository" },
        { control: "pr", reason: "not in a git repository" },
        { control: "mergeQueue", reason: "no work items recorded (no state store yet)" },
        {
          control: "conflictQueue",
          reason: "not in a git repository; no work items recorded (no state store yet)",
        },
      ],
    });
  });

  it("without --sid or a calling session, the most recently active session is shown", async () => {
    const s = richSetup();
    const { CLAUDE_CODE_SESSION_ID: _, ...env } = s.env;
    const { payload } = await collectHud({
      stateDir: s.stateDir,
      configPath: s.configPath,
      env,
      claudeHome: s.claudeHome,
      bridgeDir: s.bridgeDir,
    });
    expect(payload.context).toMatchObject({ sessionId: SID, worktree: s.repo });
    // A person's shell stops another session by signalling its harness
    // process: none runs here.
    expect(payload.sessionControls).toMatchObject({
      blocked: [
        { control: "stop", reason: expect.stringContaining("no running Claude Code process") },
      ],
    });
  });
});

/** The fixture transcript (a pending Bash call, a finished sub-agent, usage
 * on every assistant record) and its sub-agent, as session `sid`'s. */
function plantTranscript(claudeHome: string, sid: string): string {
  const from = join(ROOT, "test", "fixtures", "claude-code", "config-home", "projects");
  const dir = join(claudeHome, "projects", "x");
  mkdirSync(dir, { recursive: true });
  const fixtureSid = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
  cpSync(join(from, "-home-dev-widgets"), dir, { recursive: true });
  renameSync(join(dir, fixtureSid), join(dir, sid));
  const path = join(dir, `${sid}.jsonl`);
  writeFileSync(path, readFileSync(join(dir, `${fixtureSid}.jsonl`)));
  return path;
}

describe("the HUD from the session's transcript", () => {
  it("has tool calls with pending, stale and the last tool, agents, and token counts", async () => {
    const s = richSetup();
    plantTranscript(s.claudeHome, SID);
    const now = Date.parse("2026-11-30T12:00:00.000Z");
    const { payload } = await collectHud({
      stateDir: s.stateDir,
      configPath: s.configPath,
      env: s.env,
      claudeHome: s.claudeHome,
      bridgeDir: s.bridgeDir,
      now,
    });
    expect(hudProblems(payload)).toEqual([]);
    // The transcript wins over the bridge: 5 calls, the Bash one still running.
    expect(payload.toolCalls).toEqual({
      total: 5,
      pending: 1,
      stale: 1,
      lastTool: {
        name: "ScheduleWakeup",
        status: "success",
        finishedAt: "2026-11-30T10:00:45.000Z",
      },
    });
    expect(payload.activeAgents).toEqual([
      {
        id: "a7c3e91f04d2b685",
        state: "completed",
        branch: "main",
        worktree: s.repo,
        objective: "Find the claim API",
        handoffPath: null,
      },
    ]);
    // Main transcript (one streamed message counted once) plus the sub-agent.
    const main = {
      input: 4 + 4 * 6,
      output: 96 + 4 * 240,
      cacheCreation: 2310 + 4 * 512,
      cacheRead: 15_400 + 4 * 17_710,
    };
    const sub = { input: 900 + 1100, output: 40 + 30, cacheCreation: 0, cacheRead: 0 };
    const tokens = {
      input: main.input + sub.input,
      output: main.output + sub.output,
      cacheCreation: main.cacheCreation + sub.cacheCreation,
      cacheRead: main.cacheRead + sub.cacheRead,
    };
    expect(payload.cost).toMatchObject({
      tokens: {
        ...tokens,
        total: tokens.input + tokens.output + tokens.cacheCreation + tokens.cacheRead,
      },
    });
    expect(payload.risk).toMatchObject({
      status: "attention",
      reasons: expect.arrayContaining(["1 shell call pending for more than 30 min"]),
    });
  });

  it("with no board and a clean tree, risk is ok only once the transcript is read too", async () => {
    const root = tempDir();
    const repo = makeRepo(root);
    const claudeHome = join(root, "claude");
    const stateDir = join(root, "state");
    seedStore(stateDir, {
      sessions: [
        {
          sid: SID,
          instance: "0".repeat(32),
          state: "active",
          cwd: repo,
          repo_root: repo,
          branch: "main",
          connected_at: Date.now(),
        },
      ],
      items: [],
    });
    const env = { PATH: process.env.PATH ?? "", HOME: root, CLAUDE_CODE_SESSION_ID: SID };
    const places = {
      stateDir,
      configPath: join(root, "config.json"),
      env,
      claudeHome,
      bridgeDir: root,
    };
    const before = await collectHud(places);
    expect(payload(before).risk).toMatchObject({ status: "unknown", reasons: [] });
    plantTranscript(claudeHome, SID);
    const after = await collectHud({ ...places, now: Date.parse("2026-11-30T10:02:00.000Z") });
    expect(hudProblems(after.payload)).toEqual([]);
    expect(payload(after).risk).toMatchObject({ status: "ok", reasons: [] });
  });
});

function payload(r: { payload: unknown }): Record<string, unknown> {
  return r.payload as Record<string, unknown>;
}
