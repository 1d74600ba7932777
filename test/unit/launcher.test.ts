import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";
import { validationErrors } from "../../src/contract/index.js";
import { LauncherConfigReadResult } from "../../src/contract/launcher.js";
import { launcherTemplates, runCommand, usesLaunchSid } from "../../src/harness/launch.js";
import { processStatus } from "../../src/probes/process.js";

// The launcher's config (checked by hand, every mistake named), the shell
// programs ccmsg writes for harness templates (values arrive as variables and
// never become code), and how a command run without tmux ends.

const check = (launcher: unknown) => () => checkConfig({ launcher }, "/c.json");

describe("launcher config", () => {
  it("harness templates are written out as shell programs; command templates kept as given", () => {
    const cfg = checkConfig(
      {
        launcher: {
          roots: ["/srv/work/", "~/src"],
          templates: [
            {
              name: "claude",
              harness: "claude",
              args: ["--model", "opus", "--append-system-prompt", "be brief; it's fine"],
              env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
            },
            { name: "codex", harness: "codex" },
            { name: "shell", command: 'echo "$GREETING"', params: [{ name: "GREETING" }] },
          ],
          tmux_session: "agents",
          timeout_ms: 5000,
        },
      },
      "/c.json",
    );
    const launcher = cfg.launcher!;
    expect(launcher.roots).toEqual(["/srv/work", join(process.env.HOME!, "src")]);
    const read = { root_dirs: launcher.roots, templates: launcherTemplates(launcher) };
    expect(validationErrors(LauncherConfigReadResult, read)).toEqual([]);
    expect(read.templates).toEqual([
      {
        name: "claude",
        command: `exec env ANTHROPIC_BASE_URL=http://127.0.0.1:9 claude --session-id "$CCMSG_LAUNCH_SID" --model opus --append-system-prompt 'be brief; it'\\''s fine' \${NAME:+--name "$NAME"} \${PROMPT:+-- "$PROMPT"}`,
        params: [
          { name: "PROMPT", default: "" },
          { name: "NAME", default: "" },
          { name: "WORKTREE", default: "" },
        ],
      },
      {
        name: "codex",
        command: `exec codex \${PROMPT:+-- "$PROMPT"}`,
        params: [
          { name: "PROMPT", default: "" },
          { name: "WORKTREE", default: "" },
        ],
      },
      { name: "shell", command: 'echo "$GREETING"', params: [{ name: "GREETING", default: "" }] },
    ]);
    expect(usesLaunchSid(read.templates[0]!.command)).toBe(true);
    expect(usesLaunchSid(read.templates[1]!.command)).toBe(false);
    expect(usesLaunchSid(`exec claude --session-id \${CCMSG_LAUNCH_SID}`)).toBe(true);
  });

  it("every mistake names its key", () => {
    const cases: [unknown, string][] = [
      [[], "launcher: must be an object"],
      [{ roots: [], templates: [] }, "launcher.roots: must be a non-empty array"],
      [{ roots: ["src"], templates: [] }, "launcher.roots[0]: must be an absolute path"],
      [{ roots: ["/a"], templates: [] }, "launcher.templates: must be a non-empty array"],
      [{ roots: ["/a"], templates: [{ name: "x" }], colour: 1 }, "launcher.colour: unknown key"],
      [{ roots: ["/a"], templates: [{ name: "x" }] }, "launcher.templates[0]: must be {name"],
      [
        { roots: ["/a"], templates: [{ name: "x", harness: "gemini" }] },
        'launcher.templates[0].harness: must be "claude" or "codex"',
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", harness: "claude", command: "c" }] },
        "launcher.templates[0]: give either harness or command",
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", harness: "claude", args: "--x" }] },
        "launcher.templates[0].args: must be an array of strings",
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", harness: "claude", env: { "A-B": "1" } }] },
        "launcher.templates[0].env.A-B: not a shell variable name",
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", command: "c", params: [{ name: "1X" }] }] },
        "launcher.templates[0].params[0].name: must be a shell variable name",
      ],
      [
        {
          roots: ["/a"],
          templates: [
            { name: "x", command: "c" },
            { name: "x", harness: "codex" },
          ],
        },
        'launcher.templates[1].name: duplicate template name "x"',
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", command: "c" }], tmux_session: "a:b" },
        "launcher.tmux_session: must be a name without",
      ],
      [
        { roots: ["/a"], templates: [{ name: "x", command: "c" }], timeout_ms: 0 },
        "launcher.timeout_ms: must be an integer from 1 to 600000",
      ],
    ];
    for (const [launcher, message] of cases)
      expect(check(launcher), JSON.stringify(launcher)).toThrow(`config /c.json: ${message}`);
  });
});

describe("the shell programs ccmsg writes", () => {
  /** Run a harness template's command with a stand-in harness that prints
   * the arguments it got, one JSON array. */
  const bin = mkdtempSync(join(tmpdir(), "ccmsg-argv-"));
  function argvOf(harness: "claude" | "codex", vars: Record<string, string>): string[] {
    writeFileSync(
      join(bin, harness),
      `#!${process.execPath}\nprocess.stdout.write(JSON.stringify(process.argv.slice(2)));\n`,
    );
    chmodSync(join(bin, harness), 0o755);
    const [t] = launcherTemplates({
      roots: ["/"],
      templates: [{ name: "t", harness, args: ["--x", "a b"], env: {} }],
    });
    const out = execFileSync("/bin/sh", ["-c", t!.command], {
      cwd: bin,
      env: { PATH: `${bin}:${process.env.PATH}`, ...vars },
      encoding: "utf8",
    });
    return JSON.parse(out) as string[];
  }

  it("a value is one argument whatever it holds; an empty one is left out", () => {
    const sid = "0f0e0d0c-0b0a-4908-8706-050403020100";
    const nasty = `-rf "quoted" 'single' $(touch pwned) \`touch pwned\` ; touch pwned`;
    expect(argvOf("claude", { CCMSG_LAUNCH_SID: sid, PROMPT: nasty, NAME: "the name" })).toEqual([
      "--session-id",
      sid,
      "--x",
      "a b",
      "--name",
      "the name",
      "--",
      nasty,
    ]);
    expect(argvOf("claude", { CCMSG_LAUNCH_SID: sid, PROMPT: "", NAME: "" })).toEqual([
      "--session-id",
      sid,
      "--x",
      "a b",
    ]);
    expect(argvOf("codex", { PROMPT: "fix it" })).toEqual(["--x", "a b", "--", "fix it"]);
    expect(existsSync(join(bin, "pwned"))).toBe(false);
  });
});

describe("runCommand (a launch without tmux)", () => {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-run-"));

  it("answers the command's output and exit status, in its directory with its variables", async () => {
    const r = await runCommand('echo "$GREETING from $PWD"; echo oops >&2; exit 3', {
      cwd: dir,
      env: { PATH: process.env.PATH, GREETING: "hi" },
      timeoutMs: 10_000,
    });
    expect(r).toEqual({
      stdout: `hi from ${dir}\n`,
      stderr: "oops\n",
      exit_code: 3,
      timed_out: false,
    });
  });

  it("keeps the first 64 KiB of a stream and says how much more there was", async () => {
    const r = await runCommand("head -c 100000 /dev/zero | tr '\\0' x", {
      cwd: dir,
      env: { PATH: process.env.PATH },
      timeoutMs: 10_000,
    });
    expect(r.stdout.startsWith("x".repeat(65536))).toBe(true);
    expect(r.stdout.endsWith(`\n… [${100000 - 65536} more bytes]\n`)).toBe(true);
    expect(r.exit_code).toBe(0);
  });

  it("a command ended by a signal has no exit status", async () => {
    const r = await runCommand("kill -TERM $$", {
      cwd: dir,
      env: { PATH: process.env.PATH },
      timeoutMs: 10_000,
    });
    expect(r).toEqual({ stdout: "", stderr: "", timed_out: false });
  });

  it("one that outlives the timeout is given up on: the reply comes, and its process group is ended", async () => {
    const pidFile = join(dir, "pid");
    const r = await runCommand(`echo started; sleep 30 & echo $! > ${pidFile}; wait`, {
      cwd: dir,
      env: { PATH: process.env.PATH },
      timeoutMs: 300,
    });
    expect(r).toEqual({ stdout: "started\n", stderr: "", timed_out: true });
    const pid = Number(readFileSync(pidFile, "utf8"));
    const deadline = Date.now() + 5000;
    while ((await processStatus(pid)).alive) {
      if (Date.now() > deadline) throw new Error("the command's child outlived the timeout");
      await new Promise((res) => setTimeout(res, 25));
    }
  });

  it("a command that leaves a process behind holding its output is answered when the shell exits", async () => {
    const pidFile = join(dir, "left");
    const r = await runCommand(`sleep 30 & echo $! > ${pidFile}; echo done`, {
      cwd: dir,
      env: { PATH: process.env.PATH },
      timeoutMs: 10_000,
    });
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    expect(r).toMatchObject({ stdout: "done\n", exit_code: 0, timed_out: false });
  });
});
