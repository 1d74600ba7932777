import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SESSION_VARIABLES } from "../../src/harness/launch.js";
import { requiredPath } from "../helpers/env.js";
import { fakeHarness } from "../helpers/harness-process.js";
import {
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 10, item 6: controls that act on a session's harness process —
// session_kill (and `ccmsg session stop`), session_env_read, session_rename,
// `ccmsg session resume` — against real processes standing in for Claude Code,
// found through the state files Claude Code writes (harness.md §5.1).

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** A fake `tmux` on PATH that logs each call's argv (one JSON array a line)
 * and prints `ccmsg:3 %42` as a new window and its pane; `fail` makes every call fail as tmux does
 * without a server. */
function fakeTmux(fail = false): { bin: string; calls(): string[][] } {
  const bin = mkdtempSync(join(tmpdir(), "ccmsg-tmux-"));
  const log = join(bin, "tmux.log");
  const path = join(bin, "tmux");
  writeFileSync(
    path,
    `#!${process.execPath}
require("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + "\\n");
${fail ? 'process.stderr.write("no server running on /tmp/tmux-1000/default\\n"); process.exit(1);' : 'if (process.argv[2] === "new-window") process.stdout.write("ccmsg:3 %42\\n");'}
`,
  );
  chmodSync(path, 0o755);
  for (const tool of ["claude", "codex"]) {
    writeFileSync(join(bin, tool), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, tool), 0o755);
  }
  return {
    bin,
    calls: () => {
      try {
        return readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as string[]);
      } catch {
        return [];
      }
    },
  };
}

function json(r: { stdout: string; stderr: string; code: number | null }): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function refusal(r: { stdout: string; stderr: string; code: number | null }) {
  expect(r.code, r.stdout).toBe(1);
  return (JSON.parse(r.stderr) as { error: { code: string; msg: string } }).error;
}

/** The row ECC's tools read for `sid` (written through the group commit). */
async function eccRow(stateDir: string, sid: string, state: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const db = new Database(join(stateDir, "ccmsg.db"), { readonly: true });
    const row = db.prepare("SELECT state, ended_at FROM sessions WHERE id = ?").get(sid) as
      | { state: string; ended_at: string | null }
      | undefined;
    db.close();
    if (row?.state === state || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("stopping a session's harness", () => {
  let inst: TestInstance;
  let env: Record<string, string>;
  let claude: string;
  let person: Peer;
  beforeAll(async () => {
    inst = await startInstance();
    env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    claude = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
    person = await Peer.unix(inst.socket);
    await person.helloUser();
  });
  afterAll(async () => {
    person.close();
    await inst.stop();
  });

  it("`ccmsg session stop <sid>` from a person's shell stops it with SIGINT, and ECC's row says stopped", async () => {
    const sid = newSid();
    const h = await fakeHarness(claude, sid);
    const r = json(await runCli(["session", "stop", sid, "--json"], env));
    expect(r).toEqual({ sid, terminated: true, outcome: "stopped" });
    expect(await h.exited).toBe("exit 0");
    expect(h.signals()).toEqual(["SIGINT"]);
    // A person stopped it: on the wire a pause, in ECC's table `stopped`.
    const peers = await person.subscribe("peers");
    const lost = (peers.data as { last_live: { sid: string; state: string }[] }).last_live;
    expect(lost.find((l) => l.sid === sid)).toMatchObject({ state: "paused" });
    await person.call("topic_unsubscribe", { topic: "peers" });
    expect(await eccRow(inst.stateDir, sid, "stopped")).toMatchObject({
      state: "stopped",
      ended_at: expect.any(String),
    });
  });

  it("run inside the session itself, stop declares it done: ECC's row says completed", async () => {
    const sid = newSid();
    const inside = { ...env, CLAUDE_CODE_SESSION_ID: sid };
    const r = json(await runCli(["session", "stop", "--json", "--reason", "done"], inside));
    expect(r).toMatchObject({ sid, outcome: "completed", stopped_at: expect.any(Number) });
    expect(await eccRow(inst.stateDir, sid, "completed")).toMatchObject({ state: "completed" });
  });

  it("a reused pid is never signalled: the state file's start time is not the process's", async () => {
    const sid = newSid();
    const h = await fakeHarness(claude, sid, { fields: { procStart: "1" } });
    // Nothing here knows it: it never greeted and no process of it runs.
    const cli = refusal(await runCli(["session", "stop", sid, "--json"], env));
    expect(cli.code).toBe("session_not_found");
    expect(cli.msg).toContain("no harness process of it runs");
    const kill = await person.request("session_kill", { sid, force: true });
    expect(kill.error).toMatchObject({ code: "session_not_found" });
    const env2 = await person.request("session_env_read", { sid });
    expect(env2.error).toMatchObject({ code: "session_not_found" });
    // Anything sent to it before this round trip would have arrived.
    await h.ping();
    expect(h.signals()).toEqual([]);
    expect(await h.alive()).toBe(true);
  });

  it("SIGTERM follows when SIGINT is not enough; SIGKILL only when forced", async () => {
    // Its own instance, whose graces are short (a test hook): the ladder is
    // the same, without 5 s of waiting per stop.
    const home = isolatedHome();
    const own = await startInstance({ env: { ...home.env, CCMSG_TEST_STOP_GRACE_MS: "500" } });
    const owner = await Peer.unix(own.socket);
    await owner.helloUser();
    const sid = newSid();
    const deaf = await fakeHarness(requiredPath(home.env, "CLAUDE_CONFIG_DIR"), sid, {
      ignore: ["SIGINT", "SIGTERM"],
    });
    // Not gone within the grace: not a failure, and never killed unasked.
    expect(await owner.call("session_kill", { sid })).toEqual({ terminated: false });
    await deaf.ping();
    expect(deaf.signals()).toEqual(["SIGINT", "SIGTERM"]);
    expect(await deaf.alive()).toBe(true);
    expect(await owner.call("session_kill", { sid, force: true })).toEqual({ terminated: true });
    expect(await deaf.exited).toBe("SIGKILL");
    owner.close();
    await own.stop();
  }, 30_000);

  it("is the person's: a session is refused, an unknown sid is not found", async () => {
    const session = await Peer.unix(inst.socket);
    await session.helloSession(newSid());
    const sid = newSid();
    const h = await fakeHarness(claude, sid);
    expect((await session.request("session_kill", { sid })).error).toMatchObject({
      code: "forbidden",
    });
    expect((await session.request("session_env_read", { sid })).error).toMatchObject({
      code: "forbidden",
    });
    session.close();
    expect((await person.request("session_kill", { sid: newSid() })).error).toMatchObject({
      code: "session_not_found",
    });
    await h.ping();
    expect(h.signals()).toEqual([]);
  });

  it("session_env_read: the environment the harness process started with", async () => {
    const sid = newSid();
    const h = await fakeHarness(claude, sid, { env: { CCMSG_TEST_SECRET: "s3cret = yes" } });
    const r = await person.call<{ pid: number; instance: string; env: Record<string, string> }>(
      "session_env_read",
      { sid },
    );
    expect(r).toMatchObject({ pid: h.pid, instance: inst.id });
    expect(r.env.CCMSG_TEST_SECRET).toBe("s3cret = yes");
  });
});

describe("ccmsg session resume", () => {
  /** What every resumed harness is started through: no session's variables. */
  const clean = ["env", ...SESSION_VARIABLES.flatMap((v) => ["-u", v])];
  const printed = ["-P", "-F", "#{session_name}:#{window_index} #{pane_id}"];

  it("inside tmux: a new window of the current tmux session runs `claude --resume <sid>` in the session's directory", async () => {
    const home = isolatedHome();
    const tmux = fakeTmux();
    const env = {
      ...home.env,
      PATH: `${tmux.bin}:${process.env.PATH}`,
      TMUX: "/tmp/ccmsg-fake-tmux.sock,4242,0",
    };
    const sid = newSid();
    const dir = mkdtempSync(join(tmpdir(), "ccmsg-ws-"));
    // Known here: it greeted (from its directory) and left.
    expect((await runCli(["hello", "--sid", sid, "--cwd", dir], env)).code).toBe(0);
    const r = json(await runCli(["session", "resume", sid, "--json"], env));
    expect(r).toMatchObject({
      sid,
      cwd: dir,
      launched: true,
      terminal_id: "%42",
      window: "ccmsg:3",
    });
    const claudeDir = requiredPath(home.env, "CLAUDE_CONFIG_DIR");
    expect(tmux.calls()).toEqual([
      [
        "new-window",
        ...printed,
        "-c",
        dir,
        ...clean,
        `CLAUDE_CONFIG_DIR=${claudeDir}`,
        "claude",
        "--resume",
        sid,
      ],
    ]);
    await runCli(["daemon", "stop"], env);
  });

  it("outside tmux, a Codex thread resumes with `codex resume <thread>` in the launcher's tmux session, in the directory its rollout names", async () => {
    const home = isolatedHome();
    const tmux = fakeTmux();
    const codexHome = join(home.root, "codex");
    const thread = newSid();
    const day = join(codexHome, "sessions", "2026", "11", "30");
    mkdirSync(day, { recursive: true });
    const meta = { type: "session_meta", payload: { id: thread, cwd: "/work/widgets" } };
    writeFileSync(
      join(day, `rollout-2026-11-30T11-00-00-${thread}.jsonl`),
      `${JSON.stringify(meta)}\n`,
    );
    const env = { ...home.env, CODEX_HOME: codexHome, PATH: `${tmux.bin}:${process.env.PATH}` };
    const r = json(await runCli(["session", "resume", thread, "--json"], env));
    expect(r).toMatchObject({ launched: true, argv: ["codex", "resume", thread] });
    expect(tmux.calls()).toEqual([
      ["has-session", "-t", "=ccmsg"],
      [
        "new-window",
        "-d",
        ...printed,
        "-t",
        "=ccmsg:",
        "-c",
        "/work/widgets",
        ...clean,
        `CODEX_HOME=${codexHome}`,
        "codex",
        "resume",
        thread,
      ],
    ]);
    await runCli(["daemon", "stop"], env);
  });

  it("without a tmux server: the exact command, and tmux's own reason", async () => {
    const home = isolatedHome();
    const tmux = fakeTmux(true);
    const env = { ...home.env, PATH: `${tmux.bin}:${process.env.PATH}` };
    const sid = newSid();
    const dir = mkdtempSync(join(tmpdir(), "ccmsg-ws-"));
    expect((await runCli(["hello", "--sid", sid, "--cwd", dir], env)).code).toBe(0);
    const r = await runCli(["session", "resume", sid, "--text"], env);
    expect(r.code, r.stderr).toBe(0);
    const claudeDir = requiredPath(home.env, "CLAUDE_CONFIG_DIR");
    expect(r.stdout).toBe(
      `could not open a tmux window (tmux refused: no server running on /tmp/tmux-1000/default); run:\ncd ${dir} && CLAUDE_CONFIG_DIR=${claudeDir} claude --resume ${sid}\n`,
    );
    await runCli(["daemon", "stop"], env);
  });

  it("a session that still runs is not resumed a second time", async () => {
    const home = isolatedHome();
    const tmux = fakeTmux();
    const env = { ...home.env, PATH: `${tmux.bin}:${process.env.PATH}` };
    const sid = newSid();
    const h = await fakeHarness(requiredPath(home.env, "CLAUDE_CONFIG_DIR"), sid);
    const e = refusal(await runCli(["session", "resume", sid, "--json"], env));
    expect(e).toEqual({
      code: "capability_unavailable",
      msg: `resume: the session still runs (process ${h.pid}): stop it first`,
    });
    expect(tmux.calls()).toEqual([]);
    await runCli(["daemon", "stop"], env);
  });
});

describe("session_rename (capability terminal)", () => {
  it("types Claude Code's /rename into the session's tmux pane, trimmed", async () => {
    const tmux = fakeTmux();
    const home = isolatedHome();
    const inst = await startInstance({
      env: { ...home.env, PATH: `${tmux.bin}:${process.env.PATH}` },
    });
    const claude = requiredPath(home.env, "CLAUDE_CONFIG_DIR");
    const person = await Peer.unix(inst.socket);
    try {
      const hello = await person.helloUser();
      expect(hello.capabilities).toContain("terminal");
      const sid = newSid();
      await fakeHarness(claude, sid, {
        fields: { tmux: "main:@3.%7" },
        env: { TMUX: "/tmp/ccmsg-fake-tmux.sock,4242,0" },
      });
      const r = await person.call("session_rename", { sid, title: "  Claim button  " });
      expect(r).toEqual({ terminal_id: "%7", instance: inst.id, title: "Claim button" });
      expect(tmux.calls()).toEqual([
        [
          "-S",
          "/tmp/ccmsg-fake-tmux.sock",
          "send-keys",
          "-t",
          "%7",
          "-l",
          "/rename Claim button",
          ";",
          "send-keys",
          "-t",
          "%7",
          "Enter",
        ],
      ]);
      // Control characters are refused, never typed.
      const bad = await person.request("session_rename", { sid, title: "a\nb" });
      expect(bad.error).toMatchObject({ code: "invalid_args" });
      // A session outside tmux: its terminal is unknown, and nothing is guessed.
      const elsewhere = newSid();
      await fakeHarness(claude, elsewhere);
      const refused = await person.request("session_rename", { sid: elsewhere, title: "x" });
      expect(refused.error).toMatchObject({ code: "capability_unavailable" });
      expect(tmux.calls()).toHaveLength(1);
    } finally {
      person.close();
      await inst.stop();
    }
  });

  it("is not offered where tmux is not installed", async () => {
    const home = isolatedHome();
    const empty = mkdtempSync(join(tmpdir(), "ccmsg-bin-"));
    const inst = await startInstance({ env: { ...home.env, PATH: empty } });
    const person = await Peer.unix(inst.socket);
    try {
      const hello = await person.helloUser();
      expect(hello.capabilities).not.toContain("terminal");
      const r = await person.request("session_rename", { sid: newSid(), title: "x" });
      expect(r.error).toMatchObject({ code: "capability_unavailable" });
    } finally {
      person.close();
      await inst.stop();
    }
  });
});

describe("session_search", () => {
  const FIXTURES = join(ROOT, "test", "fixtures", "claude-code", "config-home", "projects");
  const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";

  /** An instance whose config home holds the fixture transcript and one
   * session that said a long run of "a" (food for a runaway pattern). */
  async function searchInstance(budgetMs: number) {
    const home = isolatedHome();
    const claude = requiredPath(home.env, "CLAUDE_CONFIG_DIR");
    cpSync(FIXTURES, join(claude, "projects"), { recursive: true });
    const said = {
      type: "user",
      sessionId: "aaaaaaaa-0000-4000-8000-000000000001",
      cwd: "/work/a",
      timestamp: "2026-11-30T09:00:00.000Z",
      message: { role: "user", content: `${"a".repeat(40)}b` },
    };
    mkdirSync(join(claude, "projects", "-work-a"));
    writeFileSync(
      join(claude, "projects", "-work-a", `${said.sessionId}.jsonl`),
      `${JSON.stringify(said)}\n`,
    );
    const config = join(requiredPath(home.env, "XDG_CONFIG_HOME"), "ccmsg");
    mkdirSync(config, { recursive: true });
    writeFileSync(join(config, "config.json"), JSON.stringify({ search_budget_ms: budgetMs }));
    const inst = await startInstance({ env: home.env });
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    return { inst, person, claude };
  }

  it("finds a session by what was said; refuses a bad pattern; is the person's", async () => {
    const { inst, person, claude } = await searchInstance(10_000);
    try {
      const r = await person.call<{ hits: Record<string, unknown>[]; truncated: boolean }>(
        "session_search",
        { query: "claim button" },
      );
      expect(r.truncated).toBe(false);
      expect(r.hits).toEqual([
        expect.objectContaining({
          sid: SID,
          instance: inst.id,
          config_dir: claude,
          file: join(claude, "projects", "-home-dev-widgets", `${SID}.jsonl`),
          title: "Claim button for the work board",
        }),
      ]);
      const bad = await person.request("session_search", { query: "(", regex: true });
      expect(bad.error).toMatchObject({ code: "invalid_args" });
      const elsewhere = await person.call<{ hits: unknown[] }>("session_search", {
        config_dirs: ["/nowhere"],
      });
      expect(elsewhere.hits).toEqual([]);
      const session = await Peer.unix(inst.socket);
      await session.helloSession(newSid());
      expect((await session.request("session_search", {})).error).toMatchObject({
        code: "forbidden",
      });
      session.close();
    } finally {
      person.close();
      await inst.stop();
    }
  });

  it("a runaway pattern is cut off at the budget, and health pings answer meanwhile", async () => {
    const { inst, person } = await searchInstance(1500);
    const pinger = await Peer.unix(inst.socket);
    try {
      let done = false;
      const search = person
        .call<{ hits: unknown[]; truncated: boolean }>("session_search", {
          query: "^(a+)+$",
          regex: true,
        })
        .finally(() => {
          done = true;
        });
      let pings = 0;
      while (!done) {
        await pinger.call("instance_ping");
        pings++;
      }
      expect(await search).toMatchObject({ truncated: true });
      // The search ran past its budget on its own thread: the loop kept answering.
      expect(pings).toBeGreaterThan(10);
    } finally {
      pinger.close();
      person.close();
      await inst.stop();
    }
  });

  it("under a tiny budget the walk stops and says truncated", async () => {
    const { inst, person } = await searchInstance(1);
    try {
      expect(await person.call("session_search", { query: "claim" })).toEqual({
        hits: [],
        truncated: true,
      });
    } finally {
      person.close();
      await inst.stop();
    }
  });
});
