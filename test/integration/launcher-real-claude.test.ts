import { execFile, execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { FakeModel } from "../helpers/fake-model.js";
import { isolatedHome, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { alive, CLAUDE, claudeSetup, until } from "../helpers/real-claude.js";

// The launcher and session_fork_origin against the REAL Claude Code (the
// devDependency, harness spec §11) talking to a scripted model on loopback:
// `launcher_run` starts an interactive session in the real tmux that forks an
// earlier one (`--resume <sid> --fork-session --session-id "$CCMSG_LAUNCH_SID"`),
// it shows up on `agents`, and `session_fork_origin` finds where the fork
// stops being a copy of its ancestor.

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

/** A transcript's record uuids in file order. */
function uuids(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { uuid?: unknown }).uuid)
    .filter((u): u is string => typeof u === "string");
}

describe("launching a real Claude Code fork", () => {
  it("launcher_run starts it in tmux; it shows on agents; session_fork_origin names its ancestor and seam", async () => {
    const { root, env } = isolatedHome();
    const claudeHome = env.CLAUDE_CONFIG_DIR!;
    const work = join(root, "work");
    const cwd = join(work, "widgets");
    mkdirSync(cwd, { recursive: true });
    let answers = 0;
    const model = await FakeModel.start(() => ({ text: `answer ${++answers}` }));
    cleanups.push(() => model.close());
    const claudeEnv = claudeSetup(
      { HOME: env.HOME!, CLAUDE_CONFIG_DIR: claudeHome },
      cwd,
      model.url,
    );

    // The ancestor: two turns in print mode.
    const A = newSid();
    const run = promisify(execFile);
    await run(CLAUDE, ["-p", "first", "--session-id", A], { cwd, env: claudeEnv });
    await run(CLAUDE, ["-p", "second", "--resume", A], { cwd, env: claudeEnv });

    // The instance runs `claude` from its PATH, and tmux on a private server.
    const bin = mkdtempSync(join(tmpdir(), "ccmsg-claude-bin-"));
    symlinkSync(CLAUDE, join(bin, "claude"));
    const tmuxDir = mkdtempSync(join(tmpdir(), "ccmsg-tmux-"));
    const tmuxEnv = { ...process.env, TMUX_TMPDIR: tmuxDir };
    const modelVars = {
      ANTHROPIC_BASE_URL: claudeEnv.ANTHROPIC_BASE_URL!,
      ANTHROPIC_API_KEY: claudeEnv.ANTHROPIC_API_KEY!,
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
    const vars = Object.entries(modelVars)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
    mkdirSync(join(env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({
        launcher: {
          roots: [work],
          templates: [
            {
              name: "fork",
              command: `exec env ${vars} claude --resume "$FROM" --fork-session --session-id "$CCMSG_LAUNCH_SID" -- "$PROMPT"`,
              params: [{ name: "FROM" }, { name: "PROMPT", default: "go on" }],
            },
            { name: "claude", harness: "claude", env: modelVars },
          ],
          timeout_ms: 30_000,
        },
      }),
    );
    const inst = await startInstance({
      env: { ...env, PATH: `${bin}:${process.env.PATH}`, TMUX_TMPDIR: tmuxDir },
    });
    cleanups.push(() => inst.stop());
    const person = await Peer.unix(inst.socket);
    cleanups.push(() => person.close());
    const hello = (await person.helloUser()) as { capabilities: string[] };
    expect(hello.capabilities).toEqual(expect.arrayContaining(["launcher", "fork"]));
    await person.subscribe("agents");

    let harnessPid: number | undefined;
    cleanups.push(async () => {
      spawnSync("tmux", ["kill-server"], { env: tmuxEnv, stdio: "ignore" });
      if (harnessPid !== undefined)
        await until("the harness to exit", () => (alive(harnessPid!) ? undefined : true));
    });
    const r = await person.call<{ stdout: string; exit_code?: number }>("launcher_run", {
      cwd,
      template: "fork",
      params: { FROM: A, PROMPT: "third, in the fork" },
    });
    const m = /session ([0-9a-f-]{36}) runs \(pid (\d+)\)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    const B = m![1]!;
    harnessPid = Number(m![2]);
    expect(r.stdout).toMatch(/^started in tmux window ccmsg:0 \(pane %\d+\)\n/);
    expect(r.exit_code).toBe(0);
    // The real harness's own state file put it on `agents`, in the chosen directory.
    await person.next(
      (f) =>
        f.topic === "agents" &&
        ((f.data as { agents: { sid: string; cwd: string }[] }).agents ?? []).some(
          (a) => a.sid === B && a.cwd === cwd,
        ),
      30_000,
    );
    // It asks its model as the fork, with the prompt the launch gave it.
    await model.waitFor((q) => q.sid === B && q.raw.includes("third, in the fork"));
    const project = join(claudeHome, "projects", cwd.replace(/[/.]/g, "-"));
    const forkFile = join(project, `${B}.jsonl`);
    await until("the fork's answer in its transcript", () =>
      existsSync(forkFile) && readFileSync(forkFile, "utf8").includes("answer 3")
        ? true
        : undefined,
    );

    // Expected from the files themselves: the fork's records the ancestor holds.
    const ancestor = new Set(uuids(join(project, `${A}.jsonl`)));
    const shared = uuids(forkFile).filter((u) => ancestor.has(u));
    expect(shared.length).toBeGreaterThan(2);
    expect(await person.call("session_fork_origin", { sid: B })).toEqual({
      origin: { sid: A, boundary_uuid: shared.at(-1), copied: shared.length },
    });
    // The ancestor is no fork; its fork (made later) is not its origin.
    expect(await person.call("session_fork_origin", { sid: A })).toEqual({});
    const panes = execFileSync("tmux", ["list-panes", "-a", "-F", "#{pane_current_path}"], {
      env: tmuxEnv,
      encoding: "utf8",
    });
    expect(panes.trim()).toBe(cwd);
  }, 90_000);
});
