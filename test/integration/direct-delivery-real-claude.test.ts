import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import { FakeModel } from "../helpers/fake-model.js";
import { isolatedHome, ROOT, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Route (a) against the REAL Claude Code (the devDependency, harness spec
// §11's interactive recipe): an idle session in tmux, with no ccmsg hooks at
// all, talking to a scripted model on loopback, receives a ccmsg message
// through its own messaging socket and takes a turn with it at once.

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const KEY = "sk-ant-test";

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

async function until<T>(what: string, get: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("route (a) into a real Claude Code session", () => {
  it("an idle interactive session shows the message and asks its model with it", async () => {
    const { root, env } = isolatedHome();
    const claudeHome = env.CLAUDE_CONFIG_DIR!;
    const cwd = join(root, "work");
    mkdirSync(cwd);
    // What a person has answered once: onboarding, the folder's trust, the key.
    writeFileSync(
      join(claudeHome, ".claude.json"),
      JSON.stringify({
        hasCompletedOnboarding: true,
        customApiKeyResponses: { approved: [KEY], rejected: [] },
        projects: { [cwd]: { hasTrustDialogAccepted: true } },
      }),
    );
    const model = await FakeModel.start(() => ({ text: "noted" }));
    cleanups.push(() => model.close());
    const claudeEnv: Record<string, string> = {
      HOME: env.HOME!,
      CLAUDE_CONFIG_DIR: claudeHome,
      XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR!,
      PATH: process.env.PATH!,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: KEY,
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
    const words = Object.entries(claudeEnv).map(([k, v]) => shellWord(`${k}=${v}`));
    const tmux = ["-L", `ccmsg-direct-${process.pid}`, "-f", "/dev/null"];
    let harnessPid: number | undefined;
    // Nothing may outlive the test: the harness is gone before its files are.
    cleanups.push(async () => {
      spawnSync("tmux", [...tmux, "kill-server"], { stdio: "ignore" });
      if (harnessPid !== undefined)
        await until("the harness to exit", () =>
          existsSync(`/proc/${harnessPid}`) ? undefined : true,
        );
    });
    const command = `exec env -i ${words.join(" ")} ${shellWord(CLAUDE)} --permission-mode default`;
    execFileSync("tmux", [
      ...tmux,
      "new-session",
      "-d",
      "-x",
      "200",
      "-y",
      "50",
      "-c",
      cwd,
      command,
    ]);
    const pane = () => execFileSync("tmux", [...tmux, "capture-pane", "-p"], { encoding: "utf8" });

    // The session's state file names its messaging socket once it is up.
    const sessions = join(claudeHome, "sessions");
    const state = await until("an idle session with a messaging socket", () => {
      if (!existsSync(sessions)) return undefined;
      for (const name of readdirSync(sessions).filter((n) => n.endsWith(".json"))) {
        try {
          const row = JSON.parse(readFileSync(join(sessions, name), "utf8"));
          if (row.messagingSocketPath && row.status === "idle")
            return row as Record<string, unknown>;
        } catch {
          // Rewritten in place: read it again.
        }
      }
      return undefined;
    });
    harnessPid = state.pid as number;
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
        pane().includes("the build is green") ? true : undefined,
      );
    } catch (error) {
      console.log(pane());
      throw error;
    } finally {
      a.close();
    }
  }, 90_000);
});
