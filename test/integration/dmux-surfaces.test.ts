import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EccSession } from "../../src/contract/ecc/session.js";
import { validationErrors } from "../../src/contract/validate.js";
import { dmuxSessionName } from "../../src/hud/dmux.js";
import { isolatedHome } from "../helpers/instance.js";
import { placeDmuxConfig } from "../hud/dmux-fixtures.js";
import { git, hudProblems, makeRepo, runIn, tempDir, toolsDir } from "../hud/helpers.js";

// The built command (`npm run build` first) on a dmux project: a real git
// repository whose `.dmux/dmux.config.json` is the fixture, and a real git
// worktree where dmux puts a pane's.

function home() {
  const h = isolatedHome();
  return { root: h.root, env: { ...h.env, PATH: toolsDir(["git"]) } };
}

function json(r: { stdout: string; stderr: string; code: number | null }) {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("ccmsg session-inspect dmux:<dir>", () => {
  it("prints and writes the project's ecc.session.v1 snapshot", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    placeDmuxConfig(repo);
    const out = join(h.root, "out", "deep", "session.json");
    const r = await runIn(["session-inspect", "dmux:.", "--write", out], h.env, { cwd: repo });
    const doc = json(r);
    expect(validationErrors(EccSession, doc)).toEqual([]);
    expect(doc).toMatchObject({
      adapterId: "dmux",
      session: { id: dmuxSessionName(repo), state: "working", repoRoot: repo },
    });
    expect((doc.workers as { id: string }[]).map((w) => w.id)).toEqual([
      "dmux-1",
      "dmux-2",
      "dmux-3",
    ]);
    expect(readFileSync(out, "utf8")).toBe(r.stdout);
    // One pane, named from elsewhere.
    const one = json(await runIn(["session-inspect", `dmux:${repo}#fix-auth`], h.env));
    expect(one.workers).toEqual([
      expect.objectContaining({ id: "dmux-1", branch: "feat/fix-auth" }),
    ]);
  });

  it("a dmux session name: the root dmux published on the running tmux session", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    const configPath = placeDmuxConfig(repo);
    const name = dmuxSessionName(repo);
    // A tmux server of this test's own (its socket under TMUX_TMPDIR).
    const env = { ...h.env, PATH: toolsDir(["git", "tmux"]), TMUX_TMPDIR: tempDir() };
    const tmux = (...args: string[]) =>
      execFileSync("tmux", args, {
        env: { ...env, PATH: process.env.PATH },
        stdio: "pipe",
        encoding: "utf8",
      });
    tmux("new-session", "-d", "-s", name, "-c", repo, "sleep 600");
    try {
      tmux("set-option", "-t", name, "@dmux_project_root", repo);
      // dmux-1 runs in the session's pane; the others' panes are gone.
      const paneId = tmux("display-message", "-p", "-t", name, "#{pane_id}").trim();
      const config = JSON.parse(readFileSync(configPath, "utf8"));
      config.panes[0].paneId = paneId;
      writeFileSync(configPath, JSON.stringify(config));
      // From elsewhere: only tmux knows where the project is.
      const doc = json(await runIn(["session-inspect", name], env, { cwd: tempDir() }));
      expect(doc).toMatchObject({ adapterId: "dmux", session: { id: name, repoRoot: repo } });
      const runtimes = (doc.workers as { runtime: Record<string, unknown> }[]).map(
        (w) => w.runtime,
      );
      expect(runtimes[0]).toMatchObject({ active: true, dead: false, pid: expect.any(Number) });
      expect(runtimes[1]).toMatchObject({ active: false, dead: null, pid: null });
      const none = await runIn(["session-inspect", "dmux-nothing-0123abcd"], env, {
        cwd: tempDir(),
      });
      expect(none.code).toBe(1);
      expect(JSON.parse(none.stderr).error.msg).toContain("no dmux session dmux-nothing-0123abcd");
    } finally {
      tmux("kill-server");
    }
  });

  it("no project, or a broken config: a contract error on stderr, exit 1", async () => {
    const h = home();
    const dir = tempDir();
    const none = await runIn(["session-inspect", `dmux:${dir}`], h.env);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stderr).error).toMatchObject({ code: "not_found" });
    const repo = makeRepo(h.root);
    const config = placeDmuxConfig(repo);
    writeFileSync(config, "{ half");
    const broken = await runIn(["session-inspect", "dmux:."], h.env, { cwd: repo });
    expect(broken.code).toBe(1);
    const e = JSON.parse(broken.stderr).error as { code: string; msg: string };
    expect(e.code).toBe("invalid_args");
    expect(e.msg).toContain(config);
  });
});

describe("ccmsg hud with a dmux project", () => {
  it("lists the project's panes in activeAgents, from the root and from a pane's worktree", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    placeDmuxConfig(repo);
    const worktree = join(repo, ".dmux", "worktrees", "fix-auth");
    git(repo, "worktree", "add", "-q", "-b", "feat/fix-auth", worktree);
    const expected = [
      {
        id: "dmux-1",
        state: "working",
        branch: "feat/fix-auth",
        worktree,
        objective: "Fix the login redirect loop and add a regression test",
        handoffPath: null,
      },
      {
        id: "dmux-2",
        state: "waiting",
        branch: "board-api",
        worktree: join(repo, ".dmux", "worktrees", "board-api"),
        objective: "Add the claim endpoint to the board API",
        handoffPath: null,
      },
      {
        id: "dmux-3",
        state: "idle",
        branch: null,
        worktree: null,
        objective: null,
        handoffPath: null,
      },
    ];
    for (const cwd of [repo, worktree]) {
      const payload = json(await runIn(["hud", "--json"], h.env, { cwd }));
      expect(hudProblems(payload)).toEqual([]);
      expect({ cwd, agents: payload.activeAgents }).toEqual({ cwd, agents: expected });
    }
  });

  it("a broken dmux config is no crash: the HUD lists no panes", async () => {
    const h = home();
    const repo = makeRepo(h.root);
    writeFileSync(placeDmuxConfig(repo), '{"panes": 3}');
    const payload = json(await runIn(["hud", "--json"], h.env, { cwd: repo }));
    expect(hudProblems(payload)).toEqual([]);
    expect(payload.activeAgents).toBe("unknown");
  });
});
