import { chownSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { stateFiles } from "../../src/state/paths.js";
import { defaultStateDir, isolatedHome, runCli, startInstance } from "../helpers/instance.js";

// One instance per config home (harness.md §1, §8; issue 9, item 1).

describe("one instance per config home", () => {
  it("two Claude Code config homes get two instances; the same home finds its own again", async () => {
    const { root, env } = isolatedHome();
    const a = { ...env, CLAUDE_CONFIG_DIR: join(root, "claude-a") };
    const b = { ...env, CLAUDE_CONFIG_DIR: join(root, "claude-b") };
    const ping = async (e: Record<string, string>) => {
      const r = await runCli(["ping", "--json"], e);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { instance: string; pid: number };
    };
    const first = await ping(a);
    const second = await ping(b);
    expect(second.instance).not.toBe(first.instance);
    expect((await ping(a)).instance).toBe(first.instance);
    expect(defaultStateDir(a)).not.toBe(defaultStateDir(b));
    for (const e of [a, b]) expect((await runCli(["daemon", "stop"], e)).code).toBe(0);
  });

  it("a state directory too long for a socket path serves from a private short directory", async () => {
    const { root, env } = isolatedHome();
    const stateDir = join(root, "d".repeat(110));
    const inst = await startInstance({ env, stateDir });
    expect(inst.socket.startsWith(stateDir)).toBe(false);
    expect(statSync(dirname(inst.socket)).mode & 0o777).toBe(0o700);
    const r = await runCli(["ping", "--json", "--state-dir", stateDir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(await inst.stop()).toBe(0);
    rmSync(dirname(inst.socket), { recursive: true, force: true });
  });

  it("refuses a short socket directory another user made first", async () => {
    const { root, env } = isolatedHome();
    const stateDir = join(root, "e".repeat(110));
    const dir = dirname(stateFiles(stateDir).socket);
    mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    try {
      const r = await runCli(["daemon", "run", "--state-dir", stateDir, "--http", "off"], env);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not a private directory/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
