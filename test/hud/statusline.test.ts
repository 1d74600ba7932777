import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  contextUsedPct,
  formatDuration,
  renderStatusline,
  statuslineFor,
} from "../../src/harness/claude/statusline.js";
import { readTodos } from "../../src/harness/claude/todos.js";
import { stripAnsi, tempDir } from "./helpers.js";

const SID = "5b0c2a6e-2d8e-4c1f-9a37-0f7d1e2b3c4d";

function places() {
  const root = tempDir();
  const claudeHome = join(root, "claude");
  mkdirSync(join(claudeHome, "todos"), { recursive: true });
  return { recordDir: join(root, "state", "statusline"), claudeHome };
}

function todo(claudeHome: string, file: string, list: unknown, mtimeSec?: number) {
  const path = join(claudeHome, "todos", file);
  writeFileSync(path, JSON.stringify(list));
  if (mtimeSec !== undefined) utimesSync(path, mtimeSec, mtimeSec);
}

describe("the context bar", () => {
  it("shows USED context after removing the 16.5% auto-compact reserve", () => {
    expect(contextUsedPct(62)).toBe(46);
    expect(contextUsedPct(100)).toBe(0);
    expect(contextUsedPct(16.5)).toBe(100);
    // Below the reserve and beyond 100 both clamp.
    expect(contextUsedPct(5)).toBe(100);
    expect(contextUsedPct(120)).toBe(0);
  });

  it("fills one cell per 10% and colours by how full it is", () => {
    const line = renderStatusline({ remainingPct: 62 }, undefined);
    expect(stripAnsi(line)).toBe("████░░░░░░ 46%");
    const colour = (remaining: number) =>
      /^\x1b\[([0-9;]+)m/.exec(renderStatusline({ remainingPct: remaining }, undefined))?.[1];
    expect(colour(62)).toBe("32"); // 46% used: green
    expect(colour(54)).toBe("33"); // 55%: yellow
    expect(colour(41.5)).toBe("38;5;208"); // 70%: orange
    expect(colour(30)).toBe("1;31"); // 84%: red
  });
});

describe("formatting", () => {
  it("durations read like 1h12m", () => {
    expect(formatDuration(4_320_000)).toBe("1h12m");
    expect(formatDuration(7_200_000)).toBe("2h");
    expect(formatDuration(300_000)).toBe("5m");
    expect(formatDuration(59_000)).toBe("59s");
  });

  it("one line: model │ task │ cost duration lines │ dir, then the bar", () => {
    const line = renderStatusline(
      {
        model: "Opus",
        currentDir: "/home/dev/src/widgets",
        costUsd: 1.234,
        durationMs: 4_320_000,
        linesAdded: 120,
        linesRemoved: 30,
        remainingPct: 62,
      },
      "Writing tests",
    );
    expect(stripAnsi(line)).toBe(
      "Opus │ Writing tests │ $1.23 1h12m +120/-30 │ widgets ████░░░░░░ 46%",
    );
    expect(line.includes("\n")).toBe(false);
  });

  it("leaves out what the input does not carry", () => {
    expect(stripAnsi(renderStatusline({ model: "Sonnet" }, undefined))).toBe("Sonnet");
    expect(renderStatusline({}, undefined)).toBe("");
  });
});

describe("statuslineFor", () => {
  it("guards every field: wrong types are left out, never printed", async () => {
    const p = places();
    const line = await statuslineFor(
      JSON.stringify({
        session_id: SID,
        model: { display_name: 5 },
        cost: { total_cost_usd: "lots", total_duration_ms: null },
        context_window: { remaining_percentage: "62" },
        workspace: { current_dir: "/x/repo" },
      }),
      p,
    );
    expect(stripAnsi(line)).toBe("repo");
  });

  it("shows the in-progress task of the newest todo file of the session", async () => {
    const p = places();
    todo(
      p.claudeHome,
      `${SID}-agent-${SID}.json`,
      [{ content: "Old", status: "in_progress", activeForm: "Doing the old thing" }],
      1_000_000,
    );
    todo(
      p.claudeHome,
      `${SID}-agent-sub1.json`,
      [
        { content: "A", status: "completed", activeForm: "Doing A" },
        { content: "B", status: "in_progress", activeForm: "Wiring the claim button" },
      ],
      2_000_000,
    );
    // Another session's newer file is not ours.
    todo(
      p.claudeHome,
      "other-agent-other.json",
      [{ content: "X", status: "in_progress", activeForm: "Not mine" }],
      3_000_000,
    );
    const line = await statuslineFor(
      JSON.stringify({ session_id: SID, model: { display_name: "Opus" } }),
      p,
    );
    expect(stripAnsi(line)).toBe("Opus │ Wiring the claim button");
  });

  it("records the input for the HUD, atomically, only for a safe session id", async () => {
    const p = places();
    const text = JSON.stringify({ session_id: SID, model: { display_name: "Opus" } });
    await statuslineFor(text, p);
    expect(readFileSync(join(p.recordDir, `${SID}.json`), "utf8")).toBe(text);
    await statuslineFor(
      JSON.stringify({ session_id: "../escape", model: { display_name: "Opus" } }),
      p,
    );
    expect(existsSync(join(p.recordDir, "..", "escape.json"))).toBe(false);
  });

  it("throws on garbage (the command turns that into an empty line)", async () => {
    await expect(statuslineFor("not json", places())).rejects.toThrow();
    expect(await statuslineFor("[1,2]", places())).toBe("");
  });
});

describe("Claude todo files", () => {
  it("counts pending / in progress / completed of the newest list", () => {
    const p = places();
    todo(p.claudeHome, `${SID}-agent-${SID}.json`, [
      { content: "a", status: "completed", activeForm: "A-ing" },
      { content: "b", status: "completed", activeForm: "B-ing" },
      { content: "c", status: "in_progress", activeForm: "C-ing" },
      { content: "d", status: "pending", activeForm: "D-ing" },
    ]);
    expect(readTodos(p.claudeHome, SID)).toMatchObject({
      inProgress: "C-ing",
      counts: { pending: 1, inProgress: 1, completed: 2 },
    });
  });

  it("no list, or an unreadable one, is no list", () => {
    const p = places();
    expect(readTodos(p.claudeHome, SID)).toBeUndefined();
    writeFileSync(join(p.claudeHome, "todos", `${SID}-agent-x.json`), "{half");
    expect(readTodos(p.claudeHome, SID)).toBeUndefined();
    expect(readTodos(join(p.claudeHome, "missing"), SID)).toBeUndefined();
  });
});
