import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { processStatus } from "../../src/probes/process.js";
import { fakeLaunchTools } from "../helpers/fake-launch.js";
import { isolatedHome, runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { until } from "../helpers/real-claude.js";

// Issue 12 item 3: the launcher (capability `launcher`: dir_tree,
// launcher_config_read, launcher_run) on a real instance over its socket, with
// a fake `claude` that behaves as Claude Code does for presence (its state
// file in sessions/, running until signalled) and a fake or the real `tmux`.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

interface Setup {
  inst: TestInstance;
  person: Peer;
  /** What the instance's hello offered. */
  capabilities: string[];
  /** The launcher's root (resolved). */
  work: string;
  claudeHome: string;
  tools: ReturnType<typeof fakeLaunchTools>;
}

/** A PATH with the usual tools but no tmux (the instance then launches
 * without it). */
function pathWithoutTmux(): string {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-notmux-"));
  for (const tool of ["sleep", "env", "cat", "git", "ss", "ps", "head", "tr"]) {
    const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (found !== "" && !found.includes("tmux")) symlinkSync(found, join(dir, tool));
  }
  return dir;
}

/** An instance whose ccmsg config sets up the launcher over `<root>/work`. */
async function setup(
  launcher: ((work: string) => Record<string, unknown>) | undefined,
  options: { tmux?: "fake" | "real" | "none"; env?: Record<string, string> } = {},
): Promise<Setup> {
  const home = isolatedHome();
  const tools = fakeLaunchTools({ tmux: options.tmux === "fake" || options.tmux === undefined });
  const work = join(home.root, "work");
  mkdirSync(work);
  if (launcher !== undefined) {
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ launcher: launcher(work) }),
    );
  }
  const rest = options.tmux === "none" ? pathWithoutTmux() : process.env.PATH;
  const env = { ...home.env, PATH: `${tools.bin}:${rest}`, ...options.env };
  const inst = await startInstance({ env });
  const person = await Peer.unix(inst.socket);
  const { capabilities } = (await person.helloUser()) as { capabilities: string[] };
  const claudeHome = home.env.CLAUDE_CONFIG_DIR!;
  cleanups.push(async () => {
    person.close();
    await inst.stop();
    // Every fake claude the launches started ends with the test.
    for (const pid of [...tools.pids(), ...tools.claudes(claudeHome).map((c) => c.pid)])
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
  });
  return { inst, person, capabilities, work: realpathSync(work), claudeHome, tools };
}

const claudeTemplate = { name: "claude", harness: "claude", args: ["--model", "opus"] };

describe("launcher_run with a fake claude and a fake tmux", () => {
  it("runs the template in the chosen directory in a new tmux window; the session shows on agents and peers", async () => {
    const { inst, person, capabilities, work, claudeHome, tools } = await setup(
      (w) => ({
        roots: [w],
        templates: [
          claudeTemplate,
          { name: "note", command: 'echo "$GREETING" > note.txt', params: [{ name: "GREETING" }] },
        ],
      }),
      // As if the instance had been started from inside another session.
      { env: { CLAUDECODE: "1", CLAUDE_CODE_SESSION_ID: newSid() } },
    );
    expect(capabilities).toEqual(expect.arrayContaining(["launcher", "fork", "terminal"]));
    await person.subscribe("agents");

    const config = await person.call<{ root_dirs: string[]; templates: { name: string }[] }>(
      "launcher_config_read",
    );
    expect(config.root_dirs).toEqual([work]);
    expect(config.templates.map((t) => t.name)).toEqual(["claude", "note"]);

    const dir = join(work, "widgets");
    mkdirSync(dir);
    const prompt = `-look at "this" $(touch pwned)`;
    const r = await person.call<Record<string, unknown>>("launcher_run", {
      cwd: dir,
      params: { PROMPT: prompt, NAME: "widgets" },
    });
    const m = new RegExp(
      `^started in tmux window ccmsg:0 \\(pane %1\\)\\nsession (${UUID}) runs \\(pid (\\d+)\\)\\n$`,
    ).exec(r.stdout as string);
    expect(m, r.stdout as string).not.toBeNull();
    expect(r).toMatchObject({ stderr: "", exit_code: 0, timed_out: false });
    const sid = m![1]!;
    const pid = Number(m![2]);

    // The right command, in the right directory, as this instance's Claude home.
    const [run] = tools.claudes(claudeHome);
    expect(run).toMatchObject({
      pid,
      cwd: dir,
      argv: ["--session-id", sid, "--model", "opus", "--name", "widgets", "--", prompt],
    });
    expect(run!.env.CLAUDE_CONFIG_DIR).toBe(claudeHome);
    expect(run!.env.CLAUDECODE).toBeUndefined();
    expect(run!.env.CLAUDE_CODE_SESSION_ID).toBeUndefined();
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    const calls = tools.tmuxCalls();
    expect(calls[0]).toEqual(["has-session", "-t", "=ccmsg"]);
    expect(calls[1]!.slice(0, 9)).toEqual([
      "new-session",
      "-d",
      "-s",
      "ccmsg",
      "-P",
      "-F",
      "#{session_name}:#{window_index} #{pane_id}",
      "-c",
      dir,
    ]);
    expect(calls[1]!.slice(-3, -1)).toEqual(["/bin/sh", "-c"]);
    expect(calls[1]).toContain(`PROMPT=${prompt}`);

    // It is on `agents` (pushed) and live on `peers`, as Claude Code's own
    // sessions are.
    await person.next(
      (f) =>
        f.topic === "agents" &&
        ((f.data as { agents: { sid: string; cwd: string }[] }).agents ?? []).some(
          (a) => a.sid === sid && a.cwd === dir,
        ),
    );
    const watcher = await Peer.unix(inst.socket);
    cleanups.push(() => watcher.close());
    await watcher.helloUser();
    const peers = await watcher.subscribe("peers");
    expect((peers.data as { peers: { sid: string }[] }).peers.map((p) => p.sid)).toContain(sid);

    // A second launch opens a window in the same tmux session.
    const note = await person.call("launcher_run", {
      cwd: work,
      template: "note",
      params: { GREETING: "hello; rm -rf /" },
    });
    expect(note).toMatchObject({
      stdout: "started in tmux window ccmsg:1 (pane %2)\n",
      exit_code: 0,
    });
    expect(tools.tmuxCalls()[3]!.slice(0, 8)).toEqual([
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{session_name}:#{window_index} #{pane_id}",
      "-t",
      "=ccmsg:",
      "-c",
    ]);
    await until("the note", () =>
      existsSync(join(work, "note.txt")) ? readFileSync(join(work, "note.txt"), "utf8") : undefined,
    ).then((text) => expect(text).toBe("hello; rm -rf /\n"));
  });

  it("refuses a directory outside the roots however it is named, and unknown templates or parameters; nothing starts", async () => {
    const { inst, person, work, tools } = await setup((w) => ({
      roots: [join(w, "inside")],
      templates: [claudeTemplate],
    }));
    const inside = join(work, "inside");
    mkdirSync(inside);
    const outside = join(work, "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(inside, "link-out"));
    writeFileSync(join(inside, "file"), "");
    const refusals: [Record<string, unknown>, string][] = [
      [{ cwd: outside, params: {} }, "is outside the launcher's roots"],
      [{ cwd: join(inside, "link-out"), params: {} }, `(it resolves to ${outside})`],
      [{ cwd: `${inside}/../outside`, params: {} }, "is outside the launcher's roots"],
      [{ cwd: join(inside, "missing"), params: {} }, "does not exist"],
      [{ cwd: join(inside, "file"), params: {} }, "is not a directory"],
      [{ cwd: "inside", params: {} }, "is not an absolute path"],
      [
        { cwd: inside, params: {}, template: "nope" },
        'no template named "nope" (configured: claude)',
      ],
      [{ cwd: inside, params: { PROMT: "typo" } }, "has no parameter PROMT"],
      [{ cwd: inside, params: { PROMPT: "a\u0000b" } }, "holds a NUL"],
      [{ cwd: inside, params: { PROMPT: "x".repeat(20_000) } }, "a tmux window takes at most"],
    ];
    for (const [args, msg] of refusals) {
      const r = await person.request("launcher_run", args);
      expect(r.error, JSON.stringify(args).slice(0, 100)).toMatchObject({ code: "invalid_args" });
      expect(r.error!.msg).toContain(msg);
    }
    expect(tools.tmuxCalls()).toEqual([]);
    // A person's op: a session is refused by the attribute table.
    const session = await Peer.unix(inst.socket);
    cleanups.push(() => session.close());
    await session.helloSession(newSid());
    const e = await session.request("launcher_run", { cwd: inside, params: {} });
    expect(e.error).toMatchObject({ code: "forbidden" });
    expect(tools.tmuxCalls()).toEqual([]);
  });

  it("WORKTREE makes a new worktree beside the repository and starts the session there", async () => {
    const { person, work, claudeHome, tools } = await setup((w) => ({
      roots: [w],
      templates: [claudeTemplate],
    }));
    const repo = join(work, "widgets");
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", repo, ...args], {
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@t",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@t",
        },
      });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "f.txt"), "x\n");
    git("add", ".");
    git("commit", "-q", "-m", "first");
    const r = await person.call<{ stdout: string }>("launcher_run", {
      cwd: repo,
      params: { WORKTREE: "feat/claim" },
    });
    const tree = join(work, "widgets-feat-claim");
    expect(r.stdout).toMatch(
      new RegExp(`^created worktree ${tree} on branch feat/claim\\nstarted in tmux window`),
    );
    expect(
      execFileSync("git", ["-C", tree, "branch", "--show-current"], { encoding: "utf8" }),
    ).toBe("feat/claim\n");
    expect(tools.claudes(claudeHome)[0]).toMatchObject({ cwd: tree });
    // The same branch again, a bad name, no repository: refused, nothing started.
    for (const [cwd, name, msg] of [
      [repo, "feat/claim", "already exists"],
      [repo, "bad..name", "is not a valid branch name"],
      [work, "x", "is in no git repository"],
    ] as const) {
      const e = await person.request("launcher_run", { cwd, params: { WORKTREE: name } });
      expect(e.error).toMatchObject({ code: "invalid_args" });
      expect(e.error!.msg).toContain(msg);
    }
    expect(tools.claudes(claudeHome)).toHaveLength(1);
  });

  it("a worktree that would land outside the roots is refused before git runs", async () => {
    const { person, work } = await setup((w) => ({
      roots: [join(w, "widgets")],
      templates: [claudeTemplate],
    }));
    const repo = join(work, "widgets");
    mkdirSync(repo);
    execFileSync("git", ["-C", repo, "init", "-q"]);
    const e = await person.request("launcher_run", { cwd: repo, params: { WORKTREE: "x" } });
    expect(e.error).toMatchObject({ code: "invalid_args" });
    expect(e.error!.msg).toContain(`the worktree would be ${repo}-x, outside the launcher's roots`);
    expect(existsSync(`${repo}-x`)).toBe(false);
  });

  it("a Claude Code session that never appears: the reply gives up at the timeout and says where to look", async () => {
    const { person, work } = await setup((w) => ({
      roots: [w],
      templates: [claudeTemplate],
      timeout_ms: 400,
    }));
    const r = await person.call<Record<string, unknown>>("launcher_run", {
      cwd: work,
      params: {},
      command: 'exec true "$CCMSG_LAUNCH_SID"',
    });
    expect(r.timed_out).toBe(true);
    expect(r.exit_code).toBeUndefined();
    expect(r.stdout).toBe("started in tmux window ccmsg:0 (pane %1)\n");
    expect(r.stderr).toMatch(
      new RegExp(`^session ${UUID} did not appear within \\d+ s .*look at tmux window ccmsg:0\\n$`),
    );
  });
});

describe("launcher_run without tmux", () => {
  it("runs the command directly and answers its output and exit status; past the timeout it gives up", async () => {
    const { inst, person, capabilities, work } = await setup(
      (w) => ({
        roots: [w],
        templates: [
          {
            name: "hi",
            command: 'echo "$GREETING from $PWD"; echo warn >&2; exit 3',
            params: [{ name: "GREETING", default: "hello" }],
          },
          { name: "slow", command: "echo begun; exec sleep 30" },
        ],
        timeout_ms: 500,
      }),
      { tmux: "none" },
    );
    expect(capabilities).toContain("launcher");
    expect(capabilities).not.toContain("terminal");
    expect(await person.call("launcher_run", { cwd: work, params: {} })).toEqual({
      stdout: `hello from ${work}\n`,
      stderr: "warn\n",
      exit_code: 3,
      timed_out: false,
    });
    expect(
      await person.call("launcher_run", { cwd: work, params: {}, command: "pwd; exit 0" }),
    ).toEqual({ stdout: `${work}\n`, stderr: "", exit_code: 0, timed_out: false });
    expect(await person.call("launcher_run", { cwd: work, params: {}, template: "slow" })).toEqual({
      stdout: "begun\n",
      stderr: "",
      timed_out: true,
    });

    // The same from the CLI: a relative directory is the shell's.
    const cli = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const list = await runCli(["launch", "--list", "--json"], cli);
    expect(JSON.parse(list.stdout)).toMatchObject({
      root_dirs: [work],
      templates: [{ name: "hi" }, { name: "slow" }],
    });
    mkdirSync(join(work, "sub"));
    const ran = await runCli(
      ["launch", "sub", "--param", "GREETING=hey there", "--text"],
      cli,
      undefined,
      {
        cwd: work,
      },
    );
    expect(ran).toEqual({
      code: 1,
      stdout: `hey there from ${work}/sub\nwarn\nexit 3\n`,
      stderr: "",
    });
    const typo = await runCli(["launch", "--param", "GREETNG=x", "--json"], cli, undefined, {
      cwd: work,
    });
    expect(typo.code).toBe(1);
    expect(JSON.parse(typo.stderr).error).toMatchObject({ code: "invalid_args" });
  });
});

describe("launcher_run with the real tmux", () => {
  it("opens its session's windows on the default server of TMUX_TMPDIR, and the sessions show up", async () => {
    const tmuxDir = mkdtempSync(join(tmpdir(), "ccmsg-tmux-"));
    const { person, work, claudeHome, tools } = await setup(
      (w) => ({ roots: [w], templates: [claudeTemplate], tmux_session: "launched" }),
      { tmux: "real", env: { TMUX_TMPDIR: tmuxDir } },
    );
    cleanups.push(() =>
      spawnSync("tmux", ["kill-server"], {
        env: { ...process.env, TMUX_TMPDIR: tmuxDir },
        stdio: "ignore",
      }),
    );
    const first = await person.call<{ stdout: string }>("launcher_run", { cwd: work, params: {} });
    expect(first.stdout).toMatch(
      new RegExp(`^started in tmux window launched:0 \\(pane %\\d+\\)\\nsession ${UUID} runs`),
    );
    const dir = join(work, "api");
    mkdirSync(dir);
    const second = await person.call<{ stdout: string }>("launcher_run", {
      cwd: dir,
      params: { NAME: "api" },
    });
    expect(second.stdout).toMatch(/^started in tmux window launched:1 /);
    const windows = execFileSync(
      "tmux",
      ["list-windows", "-t", "=launched", "-F", "#{pane_current_path}"],
      {
        env: { ...process.env, TMUX_TMPDIR: tmuxDir },
        encoding: "utf8",
      },
    );
    expect(windows.trim().split("\n")).toEqual([work, dir]);
    // The fake claude saw the pane it runs in, as Claude Code records it.
    const runs = await until("both sessions", () => {
      const r = tools.claudes(claudeHome);
      return r.length === 2 ? r : undefined;
    });
    expect(runs.map((r) => r.env.TMUX_PANE).every((p) => /^%\d+$/.test(p ?? ""))).toBe(true);
    for (const run of runs) expect((await processStatus(run.pid)).alive).toBe(true);
  });
});

describe("dir_tree", () => {
  it("lists the directories under the roots to a depth, filtered, never through a link or out of a root", async () => {
    const { person, work } = await setup((w) => ({ roots: [w], templates: [claudeTemplate] }));
    for (const d of ["widgets/packages/deep", "widgets-board", ".hidden/x", "node_modules/x"])
      mkdirSync(join(work, d), { recursive: true });
    writeFileSync(join(work, "notes.txt"), "");
    const outside = mkdtempSync(join(tmpdir(), "ccmsg-out-"));
    mkdirSync(join(outside, "secret"));
    symlinkSync(outside, join(work, "link-out"));
    symlinkSync(join(work, "widgets"), join(work, "link-in"));
    const tree = (args: Record<string, unknown>) =>
      person.call<{ entries: unknown[] }>("dir_tree", args).then((r) => r.entries);

    expect(await tree({ roots: [work] })).toEqual([
      {
        path: work,
        children: [
          { path: `${work}/widgets`, children: [{ path: `${work}/widgets/packages` }] },
          { path: `${work}/widgets-board`, children: [] },
        ],
      },
    ]);
    expect(await tree({ roots: [work], depth: 1 })).toEqual([
      { path: work, children: [{ path: `${work}/widgets` }, { path: `${work}/widgets-board` }] },
    ]);
    expect(await tree({ roots: [work], filter: "BOARD" })).toEqual([
      { path: work, children: [{ path: `${work}/widgets-board`, children: [] }] },
    ]);
    expect(await tree({ roots: [work], depth: 5, filter: "deep" })).toEqual([
      {
        path: work,
        children: [
          {
            path: `${work}/widgets`,
            children: [
              {
                path: `${work}/widgets/packages`,
                children: [{ path: `${work}/widgets/packages/deep`, children: [] }],
              },
            ],
          },
        ],
      },
    ]);
    expect(await tree({ roots: [work], filter: "nothing-like-it" })).toEqual([
      { path: work, children: [] },
    ]);
    // A directory below a root is a root to ask for; `..` is resolved.
    expect(await tree({ roots: [`${work}/widgets/../widgets/packages`], depth: 1 })).toEqual([
      { path: `${work}/widgets/packages`, children: [{ path: `${work}/widgets/packages/deep` }] },
    ]);
    for (const [roots, msg] of [
      [[outside], "is outside the launcher's roots"],
      [[join(work, "link-out")], `(it resolves to ${realpathSync(outside)})`],
      [[`${work}/..`], "is outside the launcher's roots"],
      [["work"], "is not an absolute path"],
      [[join(work, "notes.txt")], "is not a directory"],
    ] as const) {
      const r = await person.request("dir_tree", { roots });
      expect(r.error, roots[0]).toMatchObject({ code: "invalid_args" });
      expect(r.error!.msg).toContain(msg);
    }
  });

  it("a root configured through a symlink is listed under the name it was asked by", async () => {
    const home = mkdtempSync(join(tmpdir(), "ccmsg-linked-"));
    const real = join(home, "real");
    mkdirSync(join(real, "app"), { recursive: true });
    const linked = join(home, "linked");
    symlinkSync(real, linked);
    const { person } = await setup(() => ({ roots: [linked], templates: [claudeTemplate] }));
    expect(await person.call("dir_tree", { roots: [linked], depth: 1 })).toEqual({
      entries: [{ path: linked, children: [{ path: `${linked}/app` }] }],
    });
  });

  it("follows edits of the config without a restart; without a launcher section the ops are capability_unavailable", async () => {
    const { inst, person, work } = await setup((w) => ({
      roots: [w],
      templates: [claudeTemplate],
    }));
    const file = join(inst.env.XDG_CONFIG_HOME!, "ccmsg", "config.json");
    writeFileSync(
      file,
      JSON.stringify({
        launcher: { roots: [work], templates: [{ name: "edited", command: "true" }] },
      }),
    );
    const read = await person.call<{ templates: { name: string }[] }>("launcher_config_read");
    expect(read.templates.map((t) => t.name)).toEqual(["edited"]);
    writeFileSync(file, "{}");
    const gone = await person.request("launcher_config_read");
    expect(gone.error).toMatchObject({ code: "capability_unavailable" });
    writeFileSync(file, "{ not json");
    const broken = await person.request("dir_tree", { roots: [work] });
    expect(broken.error).toMatchObject({ code: "internal_error" });
    expect(broken.error!.msg).toContain("not valid JSON");
  });

  it("is not offered without a launcher section", async () => {
    const { person, capabilities, work } = await setup(undefined);
    expect(capabilities).not.toContain("launcher");
    expect(capabilities).toContain("fork");
    for (const [op, args] of [
      ["dir_tree", { roots: [work] }],
      ["launcher_config_read", {}],
      ["launcher_run", { cwd: work, params: {} }],
    ] as const) {
      const r = await person.request(op, args);
      expect(r.error, op).toMatchObject({ code: "capability_unavailable" });
    }
  });
});

describe("session_fork_origin (capability fork) over the socket", () => {
  it("answers the ancestor of a fork-shaped transcript, nothing for an original, not_found without a transcript", async () => {
    const { inst, person, claudeHome } = await setup(undefined);
    const project = join(claudeHome, "projects", "-work-widgets");
    mkdirSync(project, { recursive: true });
    const A = newSid();
    const B = newSid();
    const record = (sid: string, uuid: string, parent: string | null, n: number) =>
      `${JSON.stringify({ parentUuid: parent, type: n % 2 ? "assistant" : "user", uuid, sessionId: sid, timestamp: new Date(Date.now() - 60_000 + n).toISOString(), message: { content: `m${n}` } })}\n`;
    const uuids = Array.from({ length: 6 }, () => newSid());
    // A: four records; B: A's first three copied (its own sessionId), then its own.
    writeFileSync(
      join(project, `${A}.jsonl`),
      uuids
        .slice(0, 4)
        .map((u, i) => record(A, u, uuids[i - 1] ?? null, i))
        .join(""),
    );
    const bornA = statSync(join(project, `${A}.jsonl`)).birthtimeMs;
    await until("a later creation time", () => {
      const probe = join(project, "probe");
      rmSync(probe, { force: true });
      writeFileSync(probe, "");
      return statSync(probe).birthtimeMs > bornA ? true : undefined;
    });
    writeFileSync(
      join(project, `${B}.jsonl`),
      [0, 1, 2, 4, 5].map((i) => record(B, uuids[i]!, uuids[i - 1] ?? null, i)).join(""),
    );
    expect(await person.call("session_fork_origin", { sid: B })).toEqual({
      origin: { sid: A, boundary_uuid: uuids[2], copied: 3 },
    });
    expect(await person.call("session_fork_origin", { sid: A })).toEqual({});
    const missing = await person.request("session_fork_origin", { sid: newSid() });
    expect(missing.error).toMatchObject({ code: "not_found" });
    const session = await Peer.unix(inst.socket);
    cleanups.push(() => session.close());
    await session.helloSession(B);
    const own = await session.request("session_fork_origin", { sid: B });
    expect(own.error).toMatchObject({ code: "forbidden" });
  });

  it("is not offered by an instance of a Codex home", async () => {
    const home = isolatedHome();
    // A Codex thread's variables pick the Codex home (harness.md §8).
    const env = { ...home.env, CODEX_HOME: join(home.root, "codex"), CODEX_THREAD_ID: newSid() };
    mkdirSync(env.CODEX_HOME);
    const inst = await startInstance({ env });
    const person = await Peer.unix(inst.socket);
    cleanups.push(async () => {
      person.close();
      await inst.stop();
    });
    const { capabilities } = (await person.helloUser()) as { capabilities: string[] };
    expect(capabilities).not.toContain("fork");
    const r = await person.request("session_fork_origin", { sid: newSid() });
    expect(r.error).toMatchObject({ code: "capability_unavailable" });
  });
});
