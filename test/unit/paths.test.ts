import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configHome, resolveStateDir, socketPath } from "../../src/state/paths.js";

// Which instance a process belongs to (harness.md §1, §8): one per config home.

const root = mkdtempSync(join(tmpdir(), "ccmsg-paths-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = (extra: Record<string, string>) => ({
  HOME: join(root, "home"),
  XDG_STATE_HOME: join(root, "state"),
  ...extra,
});
const hash8 = (path: string) => createHash("sha256").update(path).digest("hex").slice(0, 8);

describe("the default state directory", () => {
  it("is keyed by the config home: its name and the first 8 hex of its path's sha256", () => {
    const home = join(root, "work-claude");
    expect(resolveStateDir(undefined, env({ CLAUDE_CONFIG_DIR: home }))).toBe(
      join(root, "state", "ccmsg", `work-claude-${hash8(home)}`),
    );
    // The same home written differently is the same instance.
    expect(resolveStateDir(undefined, env({ CLAUDE_CONFIG_DIR: `${home}/` }))).toBe(
      resolveStateDir(undefined, env({ CLAUDE_CONFIG_DIR: home })),
    );
    expect(resolveStateDir(undefined, env({ CLAUDE_CONFIG_DIR: join(root, "other") }))).not.toBe(
      resolveStateDir(undefined, env({ CLAUDE_CONFIG_DIR: home })),
    );
  });

  it("follows Codex when a Codex thread claims the process, even inside Claude Code", () => {
    const codex = join(root, "codex-home");
    const both = env({
      CLAUDE_CONFIG_DIR: join(root, "c"),
      CODEX_HOME: codex,
      CODEX_THREAD_ID: "t",
    });
    expect(configHome(both)).toBe(codex);
    expect(resolveStateDir(undefined, both)).toBe(
      join(root, "state", "ccmsg", `codex-home-${hash8(codex)}`),
    );
    // CODEX_HOME alone does not claim the process.
    expect(configHome(env({ CODEX_HOME: codex }))).toBe(join(root, "home", ".claude"));
  });

  it("is what --state-dir or CCMSG_STATE_DIR says when given", () => {
    expect(resolveStateDir("/x", env({ CCMSG_STATE_DIR: "/y" }))).toBe("/x");
    expect(resolveStateDir(undefined, env({ CCMSG_STATE_DIR: "/y" }))).toBe("/y");
  });

  it("stays where an existing single-home user has a store, for the default home only", () => {
    const base = join(root, "legacy-state");
    mkdirSync(join(base, "ccmsg"), { recursive: true });
    writeFileSync(join(base, "ccmsg", "ccmsg.db"), "");
    const legacy = { HOME: join(root, "home"), XDG_STATE_HOME: base };
    expect(resolveStateDir(undefined, legacy)).toBe(join(base, "ccmsg"));
    // Another config home gets its own directory.
    const other = { ...legacy, CLAUDE_CONFIG_DIR: join(root, "elsewhere") };
    expect(resolveStateDir(undefined, other)).not.toBe(join(base, "ccmsg"));
  });
});

describe("the socket path", () => {
  it("is in the state directory, or in a short per-user directory when that is too long", () => {
    expect(socketPath("/s")).toBe("/s/ccmsg.sock");
    const long = join(root, "x".repeat(120));
    const short = socketPath(long);
    expect(Buffer.byteLength(short)).toBeLessThanOrEqual(103);
    expect(short).toMatch(new RegExp(`/ccmsg-${process.getuid?.() ?? 0}/[0-9a-f]{16}/ccmsg.sock$`));
    expect(socketPath(long)).toBe(short);
  });
});
