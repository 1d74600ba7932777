import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  LoopStatus,
  LoopStatusIndex,
  LoopStatusSessionFile,
} from "../../src/contract/ecc/loop-status.js";
import { EccSession } from "../../src/contract/ecc/session.js";
import { validationErrors } from "../../src/contract/validate.js";
import { requiredPath } from "../helpers/env.js";
import { isolatedHome, ROOT, runCli } from "../helpers/instance.js";

// ECC's loop surfaces (issue 10 item 5): `ccmsg loop-status` and
// `ccmsg session-inspect`, run as a person runs them, on real-format
// transcripts in a temp config home; every document validates against its
// schema. And the statusline's tool and file counts from the cached fold.

const FIXTURE = join(ROOT, "test", "fixtures", "claude-code", "config-home");
const FIXTURE_SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const NOW = "2026-11-30T12:00:00.000Z";
const at = (minutesBefore: number) =>
  new Date(Date.parse(NOW) - minutesBefore * 60_000).toISOString();

function home(): { env: Record<string, string>; claude: string; dir: string } {
  const { env } = isolatedHome();
  const claude = requiredPath(env, "CLAUDE_CONFIG_DIR");
  const dir = requiredPath(env, "HOME");
  const state = join(requiredPath(env, "XDG_STATE_HOME"), "ccmsg-test");
  return { env: { ...env, CCMSG_STATE_DIR: state }, claude, dir };
}

const jsonl = (...records: unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");
const main = { isSidechain: false, cwd: "/work/loop", userType: "external" };

/** A loop that is stuck: an old Bash call without result, an overdue
 * wake-up, a torn line in the middle. */
function stuckLoop(dir: string, sid: string): string {
  const path = join(dir, `${sid}.jsonl`);
  writeFileSync(
    path,
    jsonl(
      {
        ...main,
        type: "user",
        timestamp: at(120),
        message: { role: "user", content: "loop until green" },
      },
      {
        ...main,
        type: "assistant",
        timestamp: at(110),
        message: {
          id: "m1",
          model: "claude-x",
          content: [
            {
              type: "tool_use",
              id: "toolu_wake",
              name: "ScheduleWakeup",
              input: { delaySeconds: 1500, reason: "poll CI" },
            },
          ],
        },
      },
      {
        ...main,
        type: "user",
        timestamp: at(110),
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_wake", content: "ok" }],
        },
      },
    ) +
      '{"type":"assistant","message":{"content":[{"type":"te\n' +
      jsonl({
        ...main,
        type: "assistant",
        timestamp: at(90),
        message: {
          id: "m2",
          model: "claude-x",
          content: [
            {
              type: "tool_use",
              id: "toolu_sleep",
              name: "Bash",
              input: { command: "sleep 100000", description: "hang" },
            },
          ],
        },
      }),
  );
  return path;
}

/** A loop that is fine: its last call answered a minute ago. */
function healthyLoop(dir: string, sid: string): string {
  const path = join(dir, `${sid}.jsonl`);
  writeFileSync(
    path,
    jsonl(
      {
        ...main,
        type: "assistant",
        timestamp: at(2),
        message: {
          id: "h1",
          model: "claude-x",
          content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "npm test" } }],
        },
      },
      {
        ...main,
        type: "user",
        timestamp: at(1),
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }],
        },
      },
    ),
  );
  return path;
}

describe("ccmsg loop-status", () => {
  it("flags the stale Bash call, the overdue wake-up and the torn line; exit 2; files with --write-dir", async () => {
    const h = home();
    const project = join(h.claude, "projects", "-work-loop");
    mkdirSync(project, { recursive: true });
    stuckLoop(project, "11111111-1111-4111-8111-111111111111");
    healthyLoop(project, "22222222-2222-4222-8222-222222222222");
    // A sub-agent's own transcript is part of its session, not a loop.
    mkdirSync(join(project, "11111111-1111-4111-8111-111111111111", "subagents"), {
      recursive: true,
    });
    healthyLoop(join(project, "11111111-1111-4111-8111-111111111111", "subagents"), "agent-x");
    const out = join(h.dir, "loop-out");
    const r = await runCli(
      ["loop-status", "--json", "--now", NOW, "--exit-code", "--write-dir", out],
      h.env,
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(validationErrors(LoopStatus, doc)).toEqual([]);
    expect(doc.source).toEqual({
      bashTimeoutSeconds: 1800,
      homeDir: null,
      limit: 10,
      transcriptCount: 2,
      transcriptRoot: join(h.claude, "projects"),
      wakeGraceMultiplier: 2,
    });
    const [stuck, healthy] = doc.sessions;
    expect(stuck).toMatchObject({
      sessionId: "11111111-1111-4111-8111-111111111111",
      projectSlug: "-work-loop",
      state: "attention",
      parseErrors: 1,
      eventCount: 4,
      latestWake: {
        delaySeconds: 1500,
        dueAt: at(85),
        reason: "poll CI",
        scheduledAt: at(110),
        toolUseId: "toolu_wake",
      },
      pendingTools: [
        {
          name: "Bash",
          command: "sleep 100000",
          input: { command: "sleep 100000", description: "hang" },
          startedAt: at(90),
          toolUseId: "toolu_sleep",
          ageSeconds: 90 * 60,
        },
      ],
    });
    expect(stuck.signals.map((s: { type: string }) => s.type)).toEqual([
      "schedule_wakeup_overdue",
      "pending_bash_tool_result",
      "transcript_parse_errors",
    ]);
    expect(stuck.recommendedAction).toEqual(expect.any(String));
    expect(healthy).toMatchObject({
      state: "ok",
      signals: [],
      pendingTools: [],
      recommendedAction: null,
    });

    expect(readdirSync(out).sort()).toEqual([
      "11111111-1111-4111-8111-111111111111.json",
      "22222222-2222-4222-8222-222222222222.json",
      "index.json",
    ]);
    const index = JSON.parse(readFileSync(join(out, "index.json"), "utf8"));
    expect(validationErrors(LoopStatusIndex, index)).toEqual([]);
    expect(index.sessionCount).toBe(2);
    expect(index.sessions[0]).toEqual({
      lastEventAt: at(90),
      sessionId: "11111111-1111-4111-8111-111111111111",
      signalTypes: [
        "schedule_wakeup_overdue",
        "pending_bash_tool_result",
        "transcript_parse_errors",
      ],
      snapshotPath: join(out, "11111111-1111-4111-8111-111111111111.json"),
      state: "attention",
      transcriptPath: join(project, "11111111-1111-4111-8111-111111111111.jsonl"),
    });
    const file = JSON.parse(readFileSync(index.sessions[0].snapshotPath, "utf8"));
    expect(validationErrors(LoopStatusSessionFile, file)).toEqual([]);
    expect(file.session).toEqual(stuck);

    // Raised thresholds and a short wake grace: the torn line still needs attention.
    const lenient = await runCli(
      [
        "loop-status",
        "--json",
        "--now",
        NOW,
        "--bash-timeout-seconds",
        "86400",
        "--wake-grace-multiplier",
        "100",
      ],
      h.env,
    );
    expect(
      JSON.parse(lenient.stdout).sessions[0].signals.map((s: { type: string }) => s.type),
    ).toEqual(["transcript_parse_errors"]);
  });

  it("reads named transcripts, or a user home's .claude/projects; nothing to flag exits 0", async () => {
    const h = home();
    const dir = join(h.dir, "elsewhere");
    mkdirSync(dir, { recursive: true });
    const path = healthyLoop(dir, "33333333-3333-4333-8333-333333333333");
    const named = await runCli(
      ["loop-status", "--json", "--now", NOW, "--exit-code", "--transcript", path],
      h.env,
    );
    expect(named.code).toBe(0);
    const doc = JSON.parse(named.stdout);
    expect(validationErrors(LoopStatus, doc)).toEqual([]);
    expect(doc.sessions.map((s: { transcriptPath: string }) => s.transcriptPath)).toEqual([path]);
    expect(doc.source).toMatchObject({ transcriptCount: 1, transcriptRoot: null });

    const user = join(h.dir, "user");
    cpSync(join(FIXTURE, "projects"), join(user, ".claude", "projects"), { recursive: true });
    const viaHome = await runCli(["loop-status", "--json", "--now", NOW, "--home", user], h.env);
    const fromHome = JSON.parse(viaHome.stdout);
    expect(fromHome.source).toMatchObject({
      homeDir: user,
      transcriptRoot: join(user, ".claude", "projects"),
    });
    expect(fromHome.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([FIXTURE_SID]);

    const missing = await runCli(
      ["loop-status", "--json", "--exit-code", "--transcript", join(dir, "gone.jsonl")],
      h.env,
    );
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).errors).toEqual([
      { transcriptPath: join(dir, "gone.jsonl"), message: expect.stringContaining("ENOENT") },
    ]);
    const bad = await runCli(["loop-status", "--limit", "0"], h.env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--limit");
  });

  it("--watch repeats, one JSON document per line", async () => {
    const h = home();
    const dir = join(h.claude, "projects", "-w");
    mkdirSync(dir, { recursive: true });
    healthyLoop(dir, "44444444-4444-4444-8444-444444444444");
    const r = await runCli(
      ["loop-status", "--json", "--watch-count", "2", "--watch-interval-seconds", "0.05"],
      h.env,
    );
    const docs = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(docs).toHaveLength(2);
    for (const d of docs) expect(validationErrors(LoopStatus, d)).toEqual([]);
  });
});

describe("ccmsg session-inspect", () => {
  const SESSION_FILE = [
    "# Session: claim button",
    "**Date:** 2026-11-30",
    "**Branch:** feat/claim-button",
    "**Worktree:** /home/dev/widgets",
    "",
    "### Completed",
    "- [x] Read the board component",
    "",
    "### In Progress",
    "- [ ] Wire the claim button",
    "- [ ] Run the tests",
    "",
    "### Notes for Next Session",
    "- The schema is merged",
    "",
  ].join("\n");

  it("maps ECC's session file (claude:latest, claude:<alias>, a .tmp path) and writes what it prints", async () => {
    const h = home();
    const data = join(h.claude, "session-data");
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, "2026-11-29-0ld5e55-session.tmp"), "# old\n### In Progress\n- old\n");
    writeFileSync(join(data, "2026-11-30-abc12345-session.tmp"), SESSION_FILE);
    const written = join(h.dir, "out", "deep", "session.json");
    const r = await runCli(["session-inspect", "claude:latest", "--write", written], h.env);
    expect(r.code).toBe(0);
    expect(readFileSync(written, "utf8")).toBe(r.stdout);
    const doc = JSON.parse(r.stdout);
    expect(validationErrors(EccSession, doc)).toEqual([]);
    expect(doc).toMatchObject({
      schemaVersion: "ecc.session.v1",
      adapterId: "claude-history",
      session: {
        id: "abc12345",
        kind: "history",
        repoRoot: "/home/dev/widgets",
        sourceTarget: { type: "claude-latest", value: "claude:latest" },
      },
      workers: [
        {
          id: "abc12345",
          branch: "feat/claim-button",
          worktree: "/home/dev/widgets",
          intent: { objective: "Wire the claim button", seedPaths: [] },
          outputs: {
            summary: ["Read the board component"],
            validation: [],
            remainingRisks: ["The schema is merged"],
          },
        },
      ],
      aggregates: { workerCount: 1 },
    });
    const alias = JSON.parse((await runCli(["session-inspect", "claude:abc1"], h.env)).stdout);
    expect(alias.session.id).toBe("abc12345");
    const file = join(data, "2026-11-29-0ld5e55-session.tmp");
    const byPath = JSON.parse((await runCli(["session-inspect", file], h.env)).stdout);
    expect(byPath).toMatchObject({
      session: { id: "0ld5e55", sourceTarget: { type: "session-file", value: file } },
    });
  });

  it("a session id: its sub-agents are the workers; the document validates", async () => {
    const h = home();
    cpSync(join(FIXTURE, "projects"), join(h.claude, "projects"), { recursive: true });
    const written = join(h.dir, "inspect.json");
    const r = await runCli(["session-inspect", FIXTURE_SID, "--write", written], h.env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(written, "utf8"));
    expect(validationErrors(EccSession, doc)).toEqual([]);
    expect(doc).toMatchObject({
      adapterId: "ccmsg",
      session: { id: FIXTURE_SID, kind: "orchestrated" },
      workers: [
        {
          id: "a7c3e91f04d2b685",
          state: "completed",
          health: "healthy",
          branch: "feat/claim-button",
          worktree: "/home/dev/widgets",
          intent: { objective: "Find the claim API" },
          runtime: { kind: "claude-subagent", active: false },
        },
      ],
      aggregates: { workerCount: 1, states: { completed: 1 }, healths: { healthy: 1 } },
    });
  });

  it("no history: exit 1 with ECC's words; adapters are listed", async () => {
    const h = home();
    const r = await runCli(["session-inspect", "claude:latest", "--json"], h.env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error).toEqual({
      code: "not_found",
      msg: "No Claude session history found",
    });
    const list = JSON.parse((await runCli(["session-inspect", "--list-adapters"], h.env)).stdout);
    expect(list.map((a: { id: string }) => a.id)).toEqual(["claude-history", "ccmsg", "dmux"]);
  });
});

describe("ccmsg statusline counts", () => {
  it("shows tool calls and files written from the transcript, folding only what was appended", async () => {
    const h = home();
    cpSync(join(FIXTURE, "projects"), join(h.claude, "projects"), { recursive: true });
    const transcript = join(h.claude, "projects", "-home-dev-widgets", `${FIXTURE_SID}.jsonl`);
    const input = JSON.stringify({
      session_id: FIXTURE_SID,
      transcript_path: transcript,
      model: { display_name: "Opus" },
      cost: { total_cost_usd: 1.23, total_duration_ms: 4_320_000 },
    });
    const env = { ...h.env, NO_COLOR: "1" };
    const first = await runCli(["statusline"], env, input);
    expect(first.stdout).toBe("Opus │ $1.23 5t 0f 1h12m\n");
    const cacheDir = join(requiredPath(env, "CCMSG_STATE_DIR"), "fold-cache");
    const [cache] = readdirSync(cacheDir);
    expect(statSync(join(cacheDir, cache!)).mode & 0o777).toBe(0o600);
    // Finish the half-written line and write a file: the next refresh counts it.
    writeFileSync(
      transcript,
      `${readFileSync(transcript, "utf8")}0000000000000000001","type":"tool_result","content":"ok"}]},"uuid":"u-16","timestamp":"2026-11-30T10:02:00.000Z"}\n${jsonl(
        {
          ...main,
          type: "assistant",
          timestamp: "2026-11-30T10:03:00.000Z",
          message: {
            id: "w",
            model: "claude-x",
            content: [
              {
                type: "tool_use",
                id: "tw",
                name: "Write",
                input: { file_path: "/home/dev/widgets/x.ts" },
              },
            ],
          },
        },
        {
          ...main,
          type: "user",
          timestamp: "2026-11-30T10:03:01.000Z",
          message: {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "tw", content: "ok" }],
          },
        },
      )}`,
    );
    const second = await runCli(["statusline"], env, input);
    expect(second.stdout).toBe("Opus │ $1.23 6t 1f 1h12m\n");
  });
});
