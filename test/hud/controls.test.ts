import { describe, expect, it } from "vitest";
import { requireControl } from "../../src/cli/require-control.js";
import { SESSION_CONTROLS } from "../../src/contract/ecc/hud.js";
import { ContractError } from "../../src/contract/errors.js";
import { blockedReason, type ControlFacts, decideControls } from "../../src/hud/controls.js";
import type { GitFacts, GitProbe } from "../../src/probes/git.js";

const repo: GitFacts = {
  state: "ok",
  toplevel: "/src/widgets",
  mainRoot: "/src/widgets",
  branch: "main",
  head: "0123456789abcdef0123456789abcdef01234567",
  remoteUrl: "git@github.com:acme/widgets.git",
  repoSlug: "acme/widgets",
  dirty: false,
  unmergedPaths: [],
  worktrees: [],
};

/** Everything available: a session run from inside itself, in a repository,
 * with gh signed in, claude and codex installed and a state store (and, as
 * the harness files say, no process of it running: it can be resumed). */
const NO_PROCESS = "no running Claude Code process of session s1";
const all: ControlFacts = {
  target: "s1",
  caller: "s1",
  harness: "claude-code",
  cwd: "/src/widgets",
  cwdKnown: true,
  git: repo,
  gh: "ok",
  claude: true,
  codex: true,
  store: true,
  process: { none: NO_PROCESS },
};

function blocked(f: ControlFacts): Record<string, string> {
  return Object.fromEntries(decideControls(f).blocked.map((b) => [b.control, b.reason]));
}

describe("session controls", () => {
  it("all supported when the machine can do everything", () => {
    expect(decideControls(all)).toEqual({ supported: [...SESSION_CONTROLS], blocked: [] });
  });

  it("each control lands in exactly one list, and status is always supported", () => {
    const gits: GitProbe[] = [
      repo,
      { ...repo, branch: null },
      { state: "not-a-repo" },
      { state: "not-installed" },
      { state: "no-directory" },
    ];
    for (const git of gits)
      for (const gh of ["ok", "not-installed", "not-authenticated", undefined] as const)
        for (const target of ["s1", null])
          for (const caller of ["s1", "s2", null])
            for (const claude of [true, false])
              for (const process of [undefined, { pid: 7 }, { none: NO_PROCESS }])
                for (const store of [true, false]) {
                  const f = { ...all, git, gh, target, caller, claude, store, process };
                  const { supported, blocked: b } = decideControls(f);
                  const listed = [...supported, ...b.map((x) => x.control)].sort();
                  expect(listed).toEqual([...SESSION_CONTROLS].sort());
                  expect(supported).toContain("status");
                  for (const x of b) expect(x.reason.length).toBeGreaterThan(0);
                }
  });

  it("give concrete reasons", () => {
    expect(blocked({ ...all, gh: "not-installed" })).toEqual({ pr: "gh not installed" });
    expect(blocked({ ...all, gh: "not-authenticated" })).toEqual({ pr: "gh not authenticated" });
    expect(blocked({ ...all, git: { state: "not-a-repo" }, store: false })).toEqual({
      create: "not in a git repository",
      diff: "not in a git repository",
      pr: "not in a git repository",
      mergeQueue: "no work items recorded (no state store yet)",
      conflictQueue: "not in a git repository; no work items recorded (no state store yet)",
    });
    expect(blocked({ ...all, git: { state: "not-installed" } })).toMatchObject({
      create: "git not installed",
    });
    expect(blocked({ ...all, git: { ...repo, branch: null } })).toEqual({
      pr: "no branch checked out (detached HEAD)",
    });
    expect(blocked({ ...all, target: null, caller: null })).toEqual({
      resume: "no session identity",
      stop: "no session identity",
    });
    expect(blocked({ ...all, claude: false })).toEqual({ resume: "claude CLI not installed" });
    expect(blocked({ ...all, cwdKnown: false })).toEqual({
      resume: "the session's directory is unknown",
    });
    expect(blocked({ ...all, harness: "codex" })).toEqual({});
    expect(blocked({ ...all, harness: "codex", codex: false })).toEqual({
      resume: "codex CLI not installed",
    });
    expect(blocked({ ...all, harness: "aider" })).toEqual({
      resume: "not a Claude Code or Codex session",
    });
  });

  it("stop: the session itself declares it is done; anyone else needs its running process", () => {
    // From a person's shell or another session: only a process can be stopped.
    expect(blocked({ ...all, caller: null })).toEqual({ stop: NO_PROCESS });
    expect(blocked({ ...all, caller: "s2" })).toEqual({ stop: NO_PROCESS });
    expect(blocked({ ...all, caller: null, process: undefined })).toEqual({
      stop: "its harness process was not looked for",
    });
    // A running session can be stopped by anyone, and is not resumed twice.
    expect(blocked({ ...all, caller: null, process: { pid: 7 } })).toEqual({
      resume: "the session still runs (process 7): stop it first",
    });
  });

  it("a blocked command refuses with capability_unavailable and the HUD's own reason", () => {
    const f = { ...all, gh: "not-authenticated" as const };
    const reason = blockedReason("pr", f);
    let thrown: unknown;
    try {
      requireControl("pr", f);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ContractError);
    expect(thrown).toMatchObject({ code: "capability_unavailable", message: `pr: ${reason}` });
    expect(() => requireControl("diff", f)).not.toThrow();
  });
});
