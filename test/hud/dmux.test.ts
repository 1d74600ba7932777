import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EccSession } from "../../src/contract/ecc/session.js";
import { validationErrors } from "../../src/contract/validate.js";
import { dmuxSessionName, dmuxWorker, findDmuxRoot, readDmuxProject } from "../../src/hud/dmux.js";
import { inspectTarget } from "../../src/hud/session-inspect.js";
import { placeDmuxConfig } from "./dmux-fixtures.js";
import { tempDir } from "./helpers.js";

// dmux's project config, read from fixtures in dmux's own shape.

function project() {
  const root = join(tempDir(), "widgets");
  const configPath = placeDmuxConfig(root);
  return { root, configPath };
}

function places(cwd: string) {
  return { claudeHome: tempDir(), codexHome: tempDir(), mirrored: () => undefined, cwd };
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const e = (await p.then(
    () => undefined,
    (x: unknown) => x,
  )) as { code: string; message: string } | undefined;
  expect(e, "expected a refusal").toBeDefined();
  return e!;
}

describe("the dmux reader", () => {
  it("reads every pane of a project, with dmux's tmux session name for it", async () => {
    const { root, configPath } = project();
    const p = await readDmuxProject(root);
    expect(p.configPath).toBe(configPath);
    expect(p.projectName).toBe("widgets");
    expect(p.sessionName).toMatch(/^dmux-widgets-[0-9a-f]{8}$/);
    expect(p.sessionName).toBe(dmuxSessionName(root));
    expect(p.panes.map((x) => [x.id, x.slug, x.agentStatus])).toEqual([
      ["dmux-1", "fix-auth", "working"],
      ["dmux-2", "board-api", "waiting"],
      ["dmux-3", "shell-1", "idle"],
    ]);
  });

  it("maps a pane to a worker: prompt as objective, dmux's branch, worktree and outputs", async () => {
    const { root } = project();
    const p = await readDmuxProject(root);
    const [auth, board, shell] = p.panes.map((x) => dmuxWorker(p, x));
    expect(auth).toMatchObject({
      id: "dmux-1",
      label: "fix auth",
      state: "working",
      health: "healthy",
      branch: "feat/fix-auth",
      worktree: join(root, ".dmux", "worktrees", "fix-auth"),
      // No tmux session running it: liveness unknown.
      runtime: { kind: "dmux-pane", command: "claude", pid: null, active: null, dead: null },
      intent: { objective: "Fix the login redirect loop and add a regression test" },
      outputs: { validation: ["tests failed"] },
      artifacts: { tmuxPaneId: "%3", slug: "fix-auth", tmuxSession: p.sessionName },
    });
    // No branchName: dmux named the branch after the slug.
    expect(board).toMatchObject({
      branch: "board-api",
      state: "waiting",
      outputs: { remainingRisks: ["drops the claims table"] },
      artifacts: { needsAttention: true, agent: "codex" },
    });
    // A shell pane has no worktree or branch of its own, and no objective.
    expect(shell).toMatchObject({
      branch: null,
      worktree: null,
      runtime: { kind: "dmux-shell", command: "zsh" },
      intent: { objective: null },
      outputs: { summary: ["Shell at the project root"] },
    });
  });

  it("reads the older config that held the panes array alone", async () => {
    const root = join(tempDir(), "widgets");
    placeDmuxConfig(root, "legacy-panes.json");
    const p = await readDmuxProject(root);
    expect(p.projectName).toBe("widgets");
    expect(p.panes.map((x) => [x.slug, x.agentStatus])).toEqual([["old-layout", null]]);
    expect(dmuxWorker(p, p.panes[0]!)).toMatchObject({ state: "unknown", health: "unknown" });
  });

  it("finds the project from a pane's worktree and from the root; nothing elsewhere", async () => {
    const { root } = project();
    const worktree = join(root, ".dmux", "worktrees", "fix-auth", "src");
    mkdirSync(worktree, { recursive: true });
    expect(await findDmuxRoot(worktree)).toBe(root);
    expect(await findDmuxRoot(root)).toBe(root);
    expect(await findDmuxRoot(tempDir())).toBeUndefined();
  });

  it("a missing config is not_found, a malformed one invalid_args naming the file", async () => {
    const empty = tempDir();
    expect((await refusal(readDmuxProject(empty))).code).toBe("not_found");
    const { root, configPath } = project();
    for (const [text, why] of [
      ["{ not json", "is not JSON"],
      ['"a string"', "neither an object nor an array of panes"],
      ['{"panes": {"id": "x"}}', "`panes` is not an array"],
      ['{"panes": [{"slug": "no-id"}]}', "panes[0]: no id"],
    ] as const) {
      writeFileSync(configPath, text);
      const e = await refusal(readDmuxProject(root));
      expect({ text, code: e.code }).toEqual({ text, code: "invalid_args" });
      expect(e.message).toContain(configPath);
      expect(e.message).toContain(why);
    }
  });
});

describe("session-inspect dmux:<dir>", () => {
  it("gives the project as an ecc.session.v1 document, its panes the workers", async () => {
    const { root } = project();
    const doc = await inspectTarget("dmux:.", places(root));
    expect(validationErrors(EccSession, doc)).toEqual([]);
    expect(doc).toMatchObject({
      adapterId: "dmux",
      session: {
        id: dmuxSessionName(root),
        kind: "orchestrated",
        state: "working",
        repoRoot: root,
        sourceTarget: { type: "dmux-project", value: "dmux:." },
      },
      aggregates: { workerCount: 3, states: { working: 1, waiting: 1, idle: 1 } },
    });
  });

  it("#<pane> picks one pane by slug, id or tmux pane id", async () => {
    const { root } = project();
    for (const name of ["board-api", "dmux-2", "%5"]) {
      const doc = await inspectTarget(`dmux:${root}#${name}`, places(tempDir()));
      expect(doc.workers.map((w) => w.id)).toEqual(["dmux-2"]);
      expect(doc.session).toMatchObject({ state: "waiting", sourceTarget: { type: "dmux-pane" } });
    }
    const e = await refusal(inspectTarget(`dmux:${root}#nope`, places(root)));
    expect(e.code).toBe("not_found");
    expect(e.message).toContain("fix-auth, board-api, shell-1");
  });

  it("takes dmux's tmux session name for the project around the directory, with or without dmux:", async () => {
    const { root } = project();
    const name = dmuxSessionName(root);
    for (const target of [name, `dmux:${name}`]) {
      const doc = await inspectTarget(target, places(join(root, "src")));
      expect({ target, id: doc.session.id, n: doc.workers.length }).toEqual({
        target,
        id: name,
        n: 3,
      });
    }
  });

  it("refuses a directory with no dmux project, and another adapter for a dmux target", async () => {
    const dir = tempDir();
    const e = await refusal(inspectTarget(`dmux:${dir}`, places(dir)));
    expect(e.code).toBe("not_found");
    expect(e.message).toContain(`no dmux project at ${dir}`);
    const { root } = project();
    const wrong = await refusal(inspectTarget(`dmux:${root}`, places(root), "claude-history"));
    expect(wrong.code).toBe("invalid_args");
  });
});
