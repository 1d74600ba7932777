import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome, runCli, sharedInstance, startInstance } from "../helpers/instance.js";
import { until } from "../helpers/real-claude.js";

// File reservations between agents (DR-0041) through the real CLI and a real
// instance: `ccmsg reserve`, `release`, `reservations` and the PreToolUse hook
// `reservations check --hook`, as two sessions would run them.

const shared = sharedInstance();
const A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb";

interface Row {
  key: string;
  glob: string;
  holder: { sid: string | null; name?: string };
  exclusive: boolean;
  reason?: string;
  expires_at: number;
}

/** A fresh project directory for one test (reservations are global). */
function project(): string {
  const dir = mkdtempSync(join(shared.inst.env.HOME!, "proj-"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "a.ts"), "export const a = 1;\n");
  return dir;
}

/** Run the CLI as session `sid` (found the way a session's commands find
 * it: the harness's variable), or as the person, in `cwd`. */
function as(sid: string | null, cwd: string, args: string[], extra: Record<string, string> = {}) {
  const env = { ...shared.env, ...extra, ...(sid === null ? {} : { CLAUDE_CODE_SESSION_ID: sid }) };
  return runCli(args, env, undefined, { cwd });
}

async function live(cwd: string): Promise<Row[]> {
  const r = await as(null, cwd, ["reservations", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { reservations: Row[] }).reservations;
}

function errorOf(r: { stderr: string }): { code: string; msg: string } {
  return (JSON.parse(r.stderr) as { error: { code: string; msg: string } }).error;
}

/** Run the PreToolUse hook as Claude Code would, for `tool` on `file`. */
function hook(sid: string, cwd: string, file: string, env = shared.env, tool = "Edit") {
  const payload = {
    session_id: sid,
    hook_event_name: "PreToolUse",
    cwd,
    tool_name: tool,
    tool_input: { file_path: file, old_string: "1", new_string: "2" },
  };
  return runCli(["reservations", "check", "--hook"], env, JSON.stringify(payload), { cwd });
}

function setConfig(onConflict: "warn" | "block" | undefined): void {
  const dir = join(shared.env.XDG_CONFIG_HOME!, "ccmsg");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify(onConflict === undefined ? {} : { reservations: { on_conflict: onConflict } }),
  );
}

describe("ccmsg reserve between two sessions", () => {
  it("refuses the second of two overlapping reservations, naming the holder and the expiry, and writes nothing", async () => {
    const dir = project();
    const first = await as(A, dir, [
      "reserve",
      "src/**",
      "--for",
      "30m",
      "--reason",
      "refactor",
      "--json",
    ]);
    expect(first.code, first.stderr).toBe(0);
    const [mine] = (JSON.parse(first.stdout) as { reserved: Row[] }).reserved;
    expect(mine).toMatchObject({
      glob: `${dir}/src/**`,
      holder: { sid: A },
      exclusive: true,
      reason: "refactor",
      instance: shared.inst.id,
    });

    const second = await as(B, dir, ["reserve", "src/a.ts", "--for", "10m", "--json"]);
    expect(second.code).toBe(1);
    const error = errorOf(second);
    expect(error.code).toBe("file_conflict");
    expect(error.msg).toContain(`session ${A}`);
    expect(error.msg).toContain(new Date(mine!.expires_at).toISOString());
    expect(error.msg).toContain("refactor");
    expect(
      (await live(dir)).filter((r) => r.glob.startsWith(dir)).map((r) => r.holder.sid),
    ).toEqual([A]);

    // The readable form says the same on one line per reservation.
    const text = await as(B, dir, ["reserve", `${dir}/src/*.ts`, "--for", "10m", "--text"]);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(
      /^ccmsg reserve: already reserved:; src\/\*\*: exclusive, held by session aaaaaaaa/,
    );
  });

  it("lets shared reservations overlap, refuses shared against exclusive, and --force takes it anyway with a warning", async () => {
    const dir = project();
    expect((await as(A, dir, ["reserve", "src/", "--for", "30m", "--shared"])).code).toBe(0);
    const both = await as(B, dir, ["reserve", "src/a.ts", "--for", "30m", "--shared", "--json"]);
    expect(both.code, both.stderr).toBe(0);
    // A directory reserves everything below it.
    expect((await live(dir)).map((r) => r.glob)).toContain(`${dir}/src/**`);
    const exclusive = await as(B, dir, ["reserve", "src/b.ts", "--for", "30m"]);
    expect(errorOf(exclusive).code).toBe("file_conflict");
    const forced = await as(B, dir, ["reserve", "src/b.ts", "--for", "30m", "--force", "--json"]);
    expect(forced.code, forced.stderr).toBe(0);
    const out = JSON.parse(forced.stdout) as { reserved: Row[]; overridden: Row[] };
    expect(out.overridden.map((r) => r.holder.sid)).toEqual([A]);
  });

  it("never conflicts with one's own reservations: reserving again renews the same entry", async () => {
    const dir = project();
    const one = await as(A, dir, ["reserve", "src/**", "--for", "1m", "--json"]);
    const two = await as(A, dir, ["reserve", "src/**", "src/a.ts", "--for", "2h", "--json"]);
    expect(two.code, two.stderr).toBe(0);
    const [first] = (JSON.parse(one.stdout) as { reserved: Row[] }).reserved;
    const rows = (await live(dir)).filter((r) => r.glob.startsWith(dir));
    expect(rows).toHaveLength(2);
    const renewed = rows.find((r) => r.key === first!.key)!;
    expect(renewed.expires_at).toBeGreaterThan(first!.expires_at + 60 * 60_000);
  });

  it("is freed by its expiry: the instance sweeps it from KV and the second session then gets it", async () => {
    // Its own instance, whose clock this test moves past the expiry.
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const dir = project();
    const in_ = (sid: string | null, args: string[]) => as(sid, dir, args, env);
    const held = await in_(A, ["reserve", "src/**", "--for", "1h", "--json"]);
    expect(held.code, held.stderr).toBe(0);
    const [row] = (JSON.parse(held.stdout) as { reserved: Row[] }).reserved;
    expect(errorOf(await in_(B, ["reserve", "src/a.ts", "--for", "5m", "--json"])).code).toBe(
      "file_conflict",
    );
    await inst.advanceClock(60 * 60_000 + 1000);
    // The sweeper removes the entry itself (readers ignore it before then).
    await until(
      "the expired entry to leave KV",
      async () => {
        const r = await in_(null, ["kv", "list", "reservations", "--json"]);
        const keys = (JSON.parse(r.stdout) as { entries: { key: string }[] }).entries.map(
          (e) => e.key,
        );
        return keys.includes(row!.key) ? undefined : true;
      },
      15_000,
    );
    const later = await in_(B, ["reserve", "src/a.ts", "--for", "5m", "--json"]);
    expect(later.code, later.stderr).toBe(0);
    await inst.stop();
  });

  it("releases by glob or all at once, and says when nothing of the caller's matches", async () => {
    const dir = project();
    expect((await as(A, dir, ["reserve", "src/a.ts", "README.md", "--for", "30m"])).code).toBe(0);
    const foreign = await as(B, dir, ["release", "src/a.ts", "--json"]);
    expect(errorOf(foreign).code).toBe("not_found");
    const one = await as(A, dir, ["release", "src/a.ts", "--json"]);
    expect(one.code, one.stderr).toBe(0);
    expect((await live(dir)).filter((r) => r.glob.startsWith(dir)).map((r) => r.glob)).toEqual([
      `${dir}/README.md`,
    ]);
    expect((await as(A, dir, ["release", "--all"])).code).toBe(0);
    expect((await live(dir)).filter((r) => r.glob.startsWith(dir))).toEqual([]);
    expect(errorOf(await as(A, dir, ["release", "--json"])).code).toBe("invalid_args");
  });

  it("refuses a duration it cannot read, a reservation without one, and a holder that is no session id", async () => {
    const dir = project();
    for (const args of [
      ["src/**", "--for", "soon"],
      ["src/**", "--for", "0s"],
      ["src/**"],
      ["src/**", "--for", "5m", "--sid", "me:too"],
    ]) {
      const r = await as(A, dir, ["reserve", ...args, "--json"]);
      expect(r.code).toBe(1);
      expect(errorOf(r).code).toBe("invalid_args");
    }
  });

  it("of several sessions reserving the same file at once, at most one holds it, and every other is refused", async () => {
    const dir = project();
    const sids = [1, 2, 3, 4, 5].map((n) => `${String(n).repeat(8)}-0000-4000-8000-000000000000`);
    const runs = await Promise.all(
      sids.map((sid) => as(sid, dir, ["reserve", "src/a.ts", "--for", "10m", "--json"])),
    );
    const holders = (await live(dir))
      .filter((r) => r.glob.startsWith(dir))
      .map((r) => r.holder.sid);
    expect(holders.length).toBeLessThanOrEqual(1);
    const won = sids.filter((_, i) => runs[i]!.code === 0);
    expect(won).toEqual(holders);
    for (const r of runs.filter((x) => x.code !== 0)) expect(errorOf(r).code).toBe("file_conflict");
  });

  it("reserves the file a symlink leads to: an edit by its real path is inside", async () => {
    const dir = project();
    const link = join(dir, "via");
    symlinkSync(join(dir, "src"), link);
    expect((await as(A, dir, ["reserve", "via/*.ts", "--for", "30m"])).code).toBe(0);
    const check = await as(B, dir, ["reservations", "check", "src/a.ts", "--json"]);
    expect(check.code).toBe(1);
    expect(errorOf(check).code).toBe("file_conflict");
  });
});

describe("the PreToolUse hook `ccmsg reservations check --hook`", () => {
  it("warns the model by default, blocks when configured, and stays silent for the holder and outside", async () => {
    const dir = project();
    expect(
      (await as(A, dir, ["reserve", "src/**", "--for", "30m", "--reason", "schema work"])).code,
    ).toBe(0);
    const file = join(dir, "src", "a.ts");

    setConfig(undefined);
    const warned = await hook(B, dir, file);
    expect(warned.code).toBe(0);
    const warning = JSON.parse(warned.stdout).hookSpecificOutput;
    expect(warning.hookEventName).toBe("PreToolUse");
    expect(warning.permissionDecision).toBeUndefined();
    expect(warning.additionalContext).toContain(`session ${A}`);
    expect(warning.additionalContext).toContain("schema work");

    setConfig("block");
    try {
      // A relative path is the payload's cwd's; Write and MultiEdit alike.
      for (const [tool, path] of [
        ["Edit", file],
        ["Write", "src/new.ts"],
        ["MultiEdit", file],
      ] as const) {
        const blocked = await hook(B, dir, path, shared.env, tool);
        expect(blocked.code).toBe(0);
        const out = JSON.parse(blocked.stdout).hookSpecificOutput;
        expect(out.permissionDecision).toBe("deny");
        expect(out.permissionDecisionReason).toContain(`session ${A}`);
      }
      // The holder edits freely; a file outside is nobody's; a tool that does
      // not write is not looked at.
      expect((await hook(A, dir, file)).stdout).toBe("");
      expect((await hook(B, dir, join(dir, "README.md"))).stdout).toBe("");
      expect((await hook(B, dir, file, shared.env, "Read")).stdout).toBe("");
    } finally {
      setConfig(undefined);
    }
  });

  it("only points out another's shared reservation, even when configured to block", async () => {
    const dir = project();
    expect((await as(A, dir, ["reserve", "src/**", "--for", "30m", "--shared"])).code).toBe(0);
    setConfig("block");
    try {
      const r = await hook(B, dir, join(dir, "src", "a.ts"));
      const out = JSON.parse(r.stdout).hookSpecificOutput;
      expect(out.permissionDecision).toBeUndefined();
      expect(out.additionalContext).toContain("shared");
    } finally {
      setConfig(undefined);
    }
  });

  it("still warns when ccmsg's config cannot be read", async () => {
    const dir = project();
    expect((await as(A, dir, ["reserve", "src/**", "--for", "30m"])).code).toBe(0);
    const path = join(shared.env.XDG_CONFIG_HOME!, "ccmsg", "config.json");
    mkdirSync(join(shared.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(path, "{ reservations: ");
    try {
      const r = await hook(B, dir, join(dir, "src", "a.ts"));
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain(`session ${A}`);
    } finally {
      setConfig(undefined);
    }
  });

  it("allows in silence when no instance answers, and never starts one", async () => {
    const home = isolatedHome();
    const r = await hook(B, home.root, join(home.root, "x.ts"), home.env);
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
    const after = await runCli(["daemon", "status", "--json"], home.env);
    expect(JSON.parse(after.stdout).running).toBe(false);
  });
});
