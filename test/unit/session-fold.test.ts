import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { foldCachePath, foldFile } from "../../src/harness/fold-cache.js";
import {
  newSessionFold,
  SESSION_FOLD_VERSION,
  type SessionFold,
} from "../../src/harness/fold-state.js";
import { loopSignals } from "../../src/harness/loop-signals.js";
import { foldLines } from "../../src/harness/session-fold.js";
import { readLines } from "../../src/harness/transcript-lines.js";
import { ROOT } from "../helpers/instance.js";

// The session fold (harness/session-fold.ts) over real-format transcripts,
// and its cache (harness/fold-cache.ts): resumable, and thrown away whenever
// the file is not the one it was folded from.

const FIXTURES = join(ROOT, "test", "fixtures");
const CLAUDE = join(
  FIXTURES,
  "claude-code",
  "config-home",
  "projects",
  "-home-dev-widgets",
  "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d.jsonl",
);
const CODEX = join(
  FIXTURES,
  "codex",
  "codex-home",
  "sessions",
  "2026",
  "11",
  "30",
  "rollout-2026-11-30T11-00-00-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl",
);

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-fold-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function foldText(
  text: string,
  harness: "claude" | "codex" = "claude",
): Promise<SessionFold> {
  const dir = temp();
  const path = join(dir, "t.jsonl");
  writeFileSync(path, text);
  return (await foldFile(path, harness)).fold;
}

const jsonl = (...records: unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");
const T = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
function use(id: string, name: string, input: unknown, s: number, extra: object = {}) {
  return {
    type: "assistant",
    isSidechain: false,
    cwd: "/w",
    timestamp: T(s),
    message: { id: `m-${id}`, model: "claude-x", content: [{ type: "tool_use", id, name, input }] },
    ...extra,
  };
}
function result(id: string, s: number, extra: object = {}, isError = false) {
  return {
    type: "user",
    isSidechain: false,
    timestamp: T(s),
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: "ok", is_error: isError }],
    },
    ...extra,
  };
}
const say = (text: string, s: number, extra: object = {}) => ({
  type: "user",
  isSidechain: false,
  timestamp: T(s),
  message: { role: "user", content: text },
  ...extra,
});

describe("the session fold of a Claude Code transcript", () => {
  it("keeps calls, the pending Bash call, usage counted once per message, context, todos, agents, the wake-up", async () => {
    const { fold, offset } = await foldFile(CLAUDE, "claude");
    // The partial last line waits: the fold stops before it.
    const text = readFileSync(CLAUDE, "utf8");
    expect(offset).toBe(Buffer.byteLength(text.slice(0, text.lastIndexOf("\n") + 1)));
    expect(fold).toMatchObject({
      v: SESSION_FOLD_VERSION,
      sessionId: "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d",
      cwd: "/home/dev/widgets",
      gitBranch: "feat/claim-button",
      parseErrors: 0,
      toolTotal: 5,
      lastTool: {
        name: "ScheduleWakeup",
        status: "success",
        finishedAt: "2026-11-30T10:00:45.000Z",
      },
      lastAssistantAt: "2026-11-30T10:01:00.000Z",
      context: { tokens: 6 + 512 + 17_710, model: "claude-opus-4-5-20251101" },
      wake: {
        delaySeconds: 270,
        scheduledAt: "2026-11-30T10:00:44.000Z",
        reason: "check CI for the claim branch",
      },
      apiError: null,
    });
    expect(Object.values(fold.pending)).toEqual([
      expect.objectContaining({
        name: "Bash",
        command: "npm test",
        shell: true,
        startedAt: "2026-11-30T10:01:00.000Z",
      }),
    ]);
    // Two records of one streamed message carry the same usage: counted once.
    expect(fold.usage).toEqual({
      input: 4 + 4 * 6,
      output: 96 + 4 * 240,
      cacheCreation: 2310 + 4 * 512,
      cacheRead: 15_400 + 4 * 17_710,
    });
    expect(fold.todos?.map((t) => t.content)).toEqual(["Add the claim button", "Run the tests"]);
    expect(fold.agents).toEqual([
      expect.objectContaining({
        agentId: "a7c3e91f04d2b685",
        status: "completed",
        subagentType: "Explore",
      }),
    ]);
  });

  it("folded in pieces equals folded whole (the state resumes)", async () => {
    const whole = (await foldFile(CLAUDE, "claude")).fold;
    const pieces = newSessionFold("claude");
    for await (const batch of readLines(CLAUDE, 0, { chunkBytes: 333 })) {
      // Through JSON, as the cache keeps it, between every batch.
      const copy = JSON.parse(JSON.stringify(pieces)) as SessionFold;
      foldLines(copy, batch);
      Object.assign(pieces, copy);
    }
    expect(pieces).toEqual(whole);
  });

  it("counts lines that do not parse, and signals them with the stale call and the overdue wake-up", async () => {
    const fold = await foldText(
      `${readFileSync(CLAUDE, "utf8").replace(/[^\n]*$/, "")}{"broken\nnot json\n`,
    );
    expect(fold.parseErrors).toBe(2);
    const signals = loopSignals(fold, {
      now: Date.parse("2026-11-30T12:00:00Z"),
      bashTimeoutSeconds: 1800,
      wakeGraceMultiplier: 2,
    });
    expect(signals.map((s) => s.type)).toEqual([
      "schedule_wakeup_overdue",
      "pending_bash_tool_result",
      "transcript_parse_errors",
    ]);
    // Before the Bash threshold and the wake-up's grace: nothing but the damage.
    const early = loopSignals(fold, {
      now: Date.parse("2026-11-30T10:05:00Z"),
      bashTimeoutSeconds: 1800,
      wakeGraceMultiplier: 2,
    });
    expect(early.map((s) => s.type)).toEqual(["transcript_parse_errors"]);
  });

  it("a wake-up followed by assistant progress after its due time is not overdue", async () => {
    const fold = await foldText(
      jsonl(use("w", "ScheduleWakeup", { delaySeconds: 10, reason: "poll" }, 0), result("w", 1), {
        type: "assistant",
        isSidechain: false,
        timestamp: T(20),
        message: { id: "m2", model: "claude-x", content: [{ type: "text", text: "woke" }] },
      }),
    );
    const now = Date.parse(T(59));
    expect(loopSignals(fold, { now, bashTimeoutSeconds: 1800, wakeGraceMultiplier: 2 })).toEqual(
      [],
    );
  });

  it("an API error stops the session until the next turn; a retry notice does not", async () => {
    const error = {
      type: "assistant",
      isSidechain: false,
      isApiErrorMessage: true,
      timestamp: T(5),
      message: {
        id: "e1",
        model: "<synthetic>",
        content: [{ type: "text", text: "API Error: 400 bad" }],
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    };
    const retry = {
      type: "system",
      subtype: "api_error",
      level: "error",
      isSidechain: false,
      timestamp: T(4),
      retryAttempt: 1,
    };
    const stuck = await foldText(jsonl(say("hi", 1), retry, error));
    expect(stuck.apiError).toEqual({ text: "API Error: 400 bad", occurredAt: T(5) });
    expect(stuck.context).toBeNull();
    expect((await foldText(jsonl(say("hi", 1), retry))).apiError).toBeNull();
    expect((await foldText(jsonl(say("hi", 1), error, say("again", 6)))).apiError).toBeNull();
    // A harness-injected meta record starts no turn.
    expect(
      (await foldText(jsonl(say("hi", 1), error, say("caveat", 6, { isMeta: true })))).apiError,
    ).not.toBeNull();
    // A sub-agent's error is not the session's.
    expect(
      (await foldText(jsonl(say("hi", 1), { ...error, isSidechain: true }))).apiError,
    ).toBeNull();
  });

  it("background tasks: started, named by their result, ended by a notification or a stop", async () => {
    const fold = await foldText(
      jsonl(
        use("b1", "Bash", { command: "npm run watch", run_in_background: true }, 1),
        result("b1", 2, { toolUseResult: { backgroundTaskId: "shell7" } }),
        use("m1", "Monitor", { description: "tail the log", command: "tail -f x" }, 3),
        result("m1", 4, { toolUseResult: { taskId: "mon2" } }),
        use(
          "a1",
          "Agent",
          {
            description: "research",
            prompt: "p",
            subagent_type: "Explore",
            run_in_background: true,
          },
          5,
        ),
        result("a1", 6, { toolUseResult: { status: "async_launched", agentId: "ag9" } }),
        say(
          "<task-notification>\n<task-id>shell7</task-id>\n<status>completed</status>\n</task-notification>",
          7,
        ),
        use("s1", "TaskStop", { task_id: "mon2" }, 8),
        result("s1", 9),
      ),
    );
    expect(fold.background).toEqual([
      expect.objectContaining({
        kind: "bash",
        taskId: "shell7",
        status: "completed",
        endedAt: T(7),
      }),
      expect.objectContaining({
        kind: "monitor",
        taskId: "mon2",
        description: "tail the log",
        status: "killed",
        endedAt: T(9),
      }),
      expect.objectContaining({
        kind: "agent",
        taskId: "ag9",
        status: "running",
        agentType: "Explore",
      }),
    ]);
    expect(fold.agents).toEqual([
      expect.objectContaining({ agentId: "ag9", status: "running", background: true }),
    ]);
    expect(fold.pending).toEqual({});
  });

  it("files written count once each; paths outside the cwd are external; errors count as the last tool", async () => {
    const fold = await foldText(
      jsonl(
        use("w1", "Write", { file_path: "/w/a.ts", content: "x".repeat(5000) }, 1),
        result("w1", 2),
        use("e1", "Edit", { file_path: "/w/a.ts", old_string: "a", new_string: "b" }, 3),
        result("e1", 4),
        use("e2", "MultiEdit", { file_path: "/elsewhere/b.ts", edits: [] }, 5),
        result("e2", 6),
        use("e3", "Edit", { file_path: "/w/failed.ts" }, 7),
        result("e3", 8, {}, true),
        use("r1", "Read", { file_path: "/etc/hosts" }, 9),
      ),
    );
    expect(fold.filesModified).toHaveLength(2);
    expect(fold.externalFiles).toEqual(["/elsewhere/b.ts", "/etc/hosts"]);
    expect(fold.lastTool).toEqual({ name: "Edit", status: "error", finishedAt: T(8) });
    expect(Object.keys(fold.pending)).toEqual(["r1"]);
  });
});

describe("the session fold of a Codex rollout", () => {
  it("pairs function calls by call_id, takes running token totals and the turn's model", async () => {
    const { fold } = await foldFile(CODEX, "codex");
    expect(fold).toMatchObject({
      sessionId: "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
      cwd: "/home/dev/widgets-wt/cli",
      gitBranch: "feat/cli-claim",
      model: "gpt-5-codex",
      toolTotal: 1,
      pending: {},
      lastTool: { name: "shell", status: "success", finishedAt: "2026-11-30T11:00:05.000Z" },
      usage: { input: 10_240 - 8192, output: 512, cacheCreation: 0, cacheRead: 8192 },
      context: { tokens: 2048, model: "gpt-5-codex", effort: "high" },
      lastAssistantAt: "2026-11-30T11:00:09.000Z",
    });
  });

  it("a pending shell call is stale past the threshold; apply_patch counts its files", async () => {
    const rec = (s: number, type: string, payload: object) => ({ timestamp: T(s), type, payload });
    const fold = await foldText(
      jsonl(
        rec(0, "turn_context", { cwd: "/w", model: "gpt-5" }),
        rec(1, "response_item", {
          type: "custom_tool_call",
          name: "apply_patch",
          call_id: "c1",
          input: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.txt\n*** End Patch",
        }),
        rec(2, "response_item", {
          type: "custom_tool_call_output",
          call_id: "c1",
          output: '{"output":"ok","metadata":{"exit_code":0}}',
        }),
        rec(3, "response_item", {
          type: "function_call",
          name: "shell",
          call_id: "c2",
          arguments: JSON.stringify({ command: ["bash", "-lc", "sleep 9999"] }),
        }),
      ),
      "codex",
    );
    expect(fold.filesModified).toHaveLength(2);
    expect(Object.values(fold.pending)).toEqual([
      expect.objectContaining({ name: "shell", command: "sleep 9999", shell: true }),
    ]);
    const signals = loopSignals(fold, {
      now: Date.parse(T(3)) + 3_600_000,
      bashTimeoutSeconds: 1800,
      wakeGraceMultiplier: 2,
    });
    expect(signals.map((s) => s.type)).toEqual(["pending_bash_tool_result"]);
  });
});

describe("the fold cache", () => {
  function setup() {
    const dir = temp();
    const path = join(dir, "s.jsonl");
    copyFileSync(CLAUDE, path);
    // Drop the fixture's partial line so appends start clean.
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.slice(0, text.lastIndexOf("\n") + 1));
    return { dir, path, cache: join(dir, "cache") };
  }

  it("folds only what was appended since the last run, and answers as a full fold would", async () => {
    const { path, cache } = setup();
    const first = await foldFile(path, "claude", cache);
    expect(first.resumed).toBe(false);
    expect(statSync(foldCachePath(cache, path)).mode & 0o777).toBe(0o600);
    const again = await foldFile(path, "claude", cache);
    expect({ resumed: again.resumed, folded: again.foldedBytes }).toEqual({
      resumed: true,
      folded: 0,
    });
    const added = jsonl(
      use("w9", "Write", { file_path: "/home/dev/widgets/x" }, 30),
      result("w9", 31),
    );
    appendFileSync(path, added);
    const next = await foldFile(path, "claude", cache);
    expect(next).toMatchObject({ resumed: true, foldedBytes: Buffer.byteLength(added) });
    expect(next.fold).toEqual((await foldFile(path, "claude")).fold);
    expect(next.fold.filesModified).toHaveLength(1);
  });

  it("throws the cache away for a replaced, shortened or rewritten file, or another version", async () => {
    const { dir, path, cache } = setup();
    await foldFile(path, "claude", cache);
    const whole = async () => (await foldFile(path, "claude")).fold;

    // Replaced: another inode at the same path.
    const other = join(dir, "other.jsonl");
    writeFileSync(other, jsonl(say("fresh start", 1)));
    renameSync(other, path);
    let r = await foldFile(path, "claude", cache);
    expect(r.resumed).toBe(false);
    expect(r.fold).toEqual(await whole());

    // Shortened in place.
    appendFileSync(path, jsonl(say("two", 2), say("three", 3)));
    await foldFile(path, "claude", cache);
    writeFileSync(path, jsonl(say("one", 1)));
    r = await foldFile(path, "claude", cache);
    expect(r.resumed).toBe(false);
    expect(r.fold.events).toBe(1);

    // Rewritten in place to a longer file: the bytes before the offset differ.
    await foldFile(path, "claude", cache);
    writeFileSync(path, jsonl(say("uno", 1), say("dos", 2), say("tres", 3)));
    r = await foldFile(path, "claude", cache);
    expect(r.resumed).toBe(false);
    expect(r.fold).toEqual(await whole());

    // A cache of another fold version.
    const file = foldCachePath(cache, path);
    const cached = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...cached, foldVersion: SESSION_FOLD_VERSION + 1 }));
    expect((await foldFile(path, "claude", cache)).resumed).toBe(false);
    // A torn cache file.
    writeFileSync(file, "{");
    expect((await foldFile(path, "claude", cache)).resumed).toBe(false);
    expect((await foldFile(path, "claude", cache)).resumed).toBe(true);
  });
});
