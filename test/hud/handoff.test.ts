import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { namedCommit, readHandoff } from "../../src/hud/handoff.js";
import { git, makeRepo, tempDir } from "./helpers.js";

// The handoff: found by configuration or by convention, and "written" read
// from the commit it names against the commit checked out.

function setup() {
  const root = tempDir();
  const repo = makeRepo(root, "widgets-board");
  const home = join(root, "home");
  mkdirSync(join(home, "handoffs"), { recursive: true });
  const head = () => git(repo, "rev-parse", "HEAD").trim();
  const commit = () => {
    writeFileSync(join(repo, "f.txt"), `${Math.random()}\n`);
    git(repo, "commit", "-q", "-am", "another batch");
  };
  return { repo, home, env: { HOME: home }, head, commit };
}

describe("the handoff", () => {
  it("by convention ~/handoffs/<worktree name>.md: written while it names HEAD, not after a new commit", async () => {
    const s = setup();
    const file = join(s.home, "handoffs", "widgets-board.md");
    writeFileSync(
      file,
      `# Handoff\n\n**Commit:** ${s.head().slice(0, 7)}\n\nNext: wire the button.\n`,
    );
    expect(await readHandoff(undefined, s.repo, s.head(), s.env)).toEqual({
      path: "~/handoffs/widgets-board.md",
      written: true,
    });
    s.commit();
    expect(await readHandoff(undefined, s.repo, s.head(), s.env)).toEqual({
      path: "~/handoffs/widgets-board.md",
      written: false,
    });
  });

  it("no conventional file: no handoff at all; a configured one that is missing: not written", async () => {
    const s = setup();
    expect(await readHandoff(undefined, s.repo, s.head(), s.env)).toBeUndefined();
    expect(await readHandoff(undefined, null, null, s.env)).toBeUndefined();
    expect(await readHandoff("~/handoffs/elsewhere.md", s.repo, s.head(), s.env)).toEqual({
      path: "~/handoffs/elsewhere.md",
      written: false,
    });
  });

  it("the configured path wins over the convention", async () => {
    const s = setup();
    writeFileSync(join(s.home, "handoffs", "widgets-board.md"), `Commit: ${s.head()}\n`);
    const other = join(s.home, "notes.md");
    writeFileSync(other, "Commit: 0000000\n");
    expect(await readHandoff(other, s.repo, s.head(), s.env)).toEqual({
      path: other,
      written: false,
    });
  });

  it("a handoff naming no commit, or HEAD unknown: written is unknown, whatever its mtime", async () => {
    const s = setup();
    const file = join(s.home, "handoffs", "widgets-board.md");
    writeFileSync(file, "# Handoff\n\nFreshly written, but says nothing of the batch.\n");
    expect(await readHandoff(undefined, s.repo, s.head(), s.env)).toMatchObject({ written: null });
    writeFileSync(file, `Commit: ${s.head()}\n`);
    expect(await readHandoff(undefined, s.repo, null, s.env)).toMatchObject({ written: null });
  });

  it("the last marker counts: a handoff appended per batch", () => {
    const text = [
      "## Batch 1",
      "**Commit:** 1111111",
      "## Batch 2",
      "- Batch: `2222222abc`",
      "The word commit: in prose is no marker",
    ].join("\n");
    expect(namedCommit(text)).toBe("2222222abc");
    expect(namedCommit("**Commit**: ABCDEF0\n")).toBe("abcdef0");
    expect(namedCommit("no marker here\n")).toBeUndefined();
  });
});
