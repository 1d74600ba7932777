import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FakeModel } from "../helpers/fake-model.js";
import { isolatedHome, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { claudeSetup, idleSessionState, TmuxClaude, until } from "../helpers/real-claude.js";

// Route (a) against the REAL Claude Code (the devDependency, harness spec
// §11's interactive recipe): an idle session in tmux, with no ccmsg hooks at
// all, talking to a scripted model on loopback, receives a ccmsg message
// through its own messaging socket and takes a turn with it at once.

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

describe("route (a) into a real Claude Code session", () => {
  it("an idle interactive session shows the message and asks its model with it", async () => {
    const { root, env } = isolatedHome();
    const claudeHome = env.CLAUDE_CONFIG_DIR!;
    const cwd = join(root, "work");
    mkdirSync(cwd);
    const model = await FakeModel.start(() => ({ text: "noted" }));
    cleanups.push(() => model.close());
    const claudeEnv = claudeSetup(
      { HOME: env.HOME!, CLAUDE_CONFIG_DIR: claudeHome },
      cwd,
      model.url,
      { XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR! },
    );
    const claude = new TmuxClaude("ccmsg-direct", claudeEnv, cwd, ["--permission-mode", "default"]);
    // Nothing may outlive the test: the harness is gone before its files are.
    cleanups.push(() => claude.kill());

    // The session's state file names its messaging socket once it is up.
    const state = await idleSessionState(claudeHome);
    const B = state.sessionId as string;
    const before = model.requests.length;

    const inst = await startInstance({ env });
    cleanups.push(() => inst.stop());
    const A = newSid();
    const a = await Peer.unix(inst.socket);
    await a.helloSession(A, { repo: "widgets", ws: "api" });
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B);
    b.close();
    try {
      expect(await a.call("message_send", { to: B, text: "the build is green" })).toEqual({
        delivered: true,
      });
      // It asks its model at once, in the contract's wording, reply line included.
      const turn = await model.waitFor(
        (r) => model.requests.indexOf(r) >= before && r.raw.includes("the build is green"),
      );
      expect(turn.sid).toBe(B);
      expect(turn.raw).toContain("cross-session-message");
      expect(turn.raw).toContain(`--to ${A} <text>`);
      await until("the message on screen", () =>
        claude.pane().includes("the build is green") ? true : undefined,
      );
    } catch (error) {
      console.log(claude.pane());
      throw error;
    } finally {
      a.close();
    }
  }, 90_000);
});
