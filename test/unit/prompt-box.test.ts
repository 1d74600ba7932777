import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { promptBox, typeable } from "../../src/harness/claude/prompt-box.js";
import { typedTurnAt } from "../../src/harness/transcript-mentions.js";

// Screens as `tmux capture-pane -p` read them from Claude Code 2.1.328
// (DR-0055), shortened in width.
const RULE = "─".repeat(60);
const screen = (...box: string[]) =>
  [
    " ▐▛███▛█   Claude Code v2.1.328",
    "❯ please run the tests",
    "● noted",
    RULE,
    ...box,
    RULE,
    "  ⏸ manual mode on",
  ].join("\n");

describe("Claude Code's input box on screen", () => {
  it("reads an empty box (padded with a no-break space) as empty", () => {
    expect(promptBox(screen("❯\u00a0"))).toBe("empty");
    expect(promptBox(screen("❯ "))).toBe("empty");
  });

  it("reads someone's unsent words, on one line or several, as text", () => {
    expect(promptBox(screen("❯\u00a0half a thought"))).toBe("holds-text");
    expect(promptBox(screen("❯ first line", "  second line"))).toBe("holds-text");
  });

  it("finds no box while a permission dialog replaces it", () => {
    const dialog = [
      "● X",
      "  ⎿  $ echo hi",
      RULE,
      " Bash command",
      " Do you want to proceed?",
      " ❯ 1. Yes",
      "   2. No",
      " Esc to cancel · Tab to amend",
    ].join("\n");
    expect(promptBox(dialog)).toBe("absent");
    expect(promptBox("")).toBe("absent");
  });
});

describe("what may be typed as a prompt", () => {
  it("one line of plain words", () => {
    expect(typeable("please run the tests", 2000)).toBe(true);
    expect(typeable("mail a@b.c about it", 2000)).toBe(true);
  });

  it("not what the box would read as keys, a command or a completion", () => {
    for (const text of [
      "two\nlines",
      "tab\there",
      "/clear",
      "!rm -rf x",
      "# note",
      "look at @src",
      "",
      "   ",
    ])
      expect(typeable(text, 2000), text).toBe(false);
    expect(typeable("x".repeat(11), 10)).toBe(false);
  });
});

describe("the typed turn in a transcript", () => {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-typed-"));
  const human = (content: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: "user",
      message: { role: "user", content },
      origin: { kind: "human" },
      promptSource: "typed",
      timestamp: "2026-12-02T03:53:17.013Z",
      ...extra,
    });

  it("is the person's own user record after the offset, with its time", async () => {
    const path = join(dir, "a.jsonl");
    const before = `${human("please run the tests", { timestamp: "2026-12-01T00:00:00.000Z" })}\n`;
    writeFileSync(path, `${before}${human("please run the tests")}\n`);
    expect(await typedTurnAt(path, "please run the tests", 0)).toBe(
      Date.parse("2026-12-01T00:00:00.000Z"),
    );
    expect(await typedTurnAt(path, "please run the tests", Buffer.byteLength(before))).toBe(
      Date.parse("2026-12-02T03:53:17.013Z"),
    );
  });

  it("is never a message from another session, a hook's feedback or another text", async () => {
    const path = join(dir, "b.jsonl");
    writeFileSync(
      path,
      [
        human("please run the tests", { origin: { kind: "peer" } }),
        JSON.stringify({
          type: "user",
          message: { role: "user", content: "please run the tests" },
        }),
        human("please run the tests later"),
        JSON.stringify({
          type: "assistant",
          message: { role: "assistant", content: "please run the tests" },
        }),
      ].join("\n"),
    );
    expect(await typedTurnAt(path, "please run the tests", 0)).toBeUndefined();
    expect(await typedTurnAt(join(dir, "missing.jsonl"), "x", 0)).toBeUndefined();
  });
});
