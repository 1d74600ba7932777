import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Receipt } from "../../src/contract/receipts.js";
import { FakeModel } from "../helpers/fake-model.js";
import { isolatedHome, ROOT, runCli, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import {
  claudeSetup,
  idleSessionState,
  TmuxClaude,
  until,
  waiterArmed,
} from "../helpers/real-claude.js";

// Receipts (DR-0054) with the REAL Claude Code 2.1.328 in tmux against a
// scripted model: `ccmsg post … --wait seen` returns once the recipient's own
// transcript records the message as its model's input — by route (a), its
// messaging socket, and by its waiter (the plugin's Stop hook, asyncRewake).

const BIN = join(ROOT, "node_modules", ".bin");
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

/** `ccmsg post <to> <text> --wait seen:60s --json` as session `from`. */
async function postWaitingSeen(
  env: Record<string, string>,
  from: string,
  to: string,
  text: string,
) {
  const r = await runCli(["post", to, text, "--wait", "seen:60s", "--json", "--sid", from], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { delivered: boolean; receipt: Receipt };
}

describe("--wait seen with the real Claude Code", () => {
  it("by its messaging socket: returns once the transcript shows the model got it", async () => {
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
      {
        XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR!,
      },
    );
    const claude = new TmuxClaude("ccmsg-receipts", claudeEnv, cwd, [
      "--permission-mode",
      "default",
    ]);
    cleanups.push(() => claude.kill());
    // The session's state file names its messaging socket once it is up.
    const state = await idleSessionState(claudeHome);
    const B = state.sessionId as string;
    const inst = await startInstance({ env });
    cleanups.push(() => inst.stop());
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B);
    b.close();
    const A = newSid();
    try {
      const out = await postWaitingSeen(inst.env, A, B, "the build is green");
      expect(out.delivered).toBe(true);
      expect(out.receipt).toMatchObject({ to: B, from: A, route: "socket" });
      expect(["seen", "read"]).toContain(out.receipt.state);
      expect(out.receipt.seen_at).toBeGreaterThanOrEqual(out.receipt.delivered_at!);
      // What the receipt says reached the model did: its request holds it.
      const turn = await model.waitFor((r) => r.raw.includes("the build is green"));
      expect(turn.sid).toBe(B);
      expect(turn.raw).toContain(out.receipt.mid);
    } catch (error) {
      console.log(claude.pane());
      throw error;
    }
  }, 120_000);

  it("by its waiter: returns once the Stop hook's feedback reached the model", async () => {
    const home = isolatedHome();
    // Route (a) off: the waiter is the route.
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ direct_delivery: false }),
    );
    const inst = await startInstance({ env: home.env });
    cleanups.push(() => inst.stop());
    const model = await FakeModel.start(() => ({ text: "ready" }));
    cleanups.push(() => model.close());
    const cwd = join(inst.env.HOME!, "widgets");
    mkdirSync(cwd, { recursive: true });
    const claudeEnv = claudeSetup(
      { HOME: inst.env.HOME!, CLAUDE_CONFIG_DIR: inst.env.CLAUDE_CONFIG_DIR! },
      cwd,
      model.url,
      { PATH: `${BIN}:${process.env.PATH}` },
    );
    const installed = await runCli(["plugin", "install", "claude", "--json"], {
      ...claudeEnv,
      XDG_STATE_HOME: inst.env.XDG_STATE_HOME,
      XDG_CONFIG_HOME: inst.env.XDG_CONFIG_HOME,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    expect(installed.code, installed.stderr).toBe(0);
    const claude = new TmuxClaude("ccmsg-receipts-wait", claudeEnv, cwd, [
      "--permission-mode",
      "default",
    ]);
    cleanups.push(() => claude.kill());
    const before = model.requests.length;
    try {
      await until("the prompt", () => (claude.pane().includes("\u276f") ? true : undefined));
      claude.type("hello");
      const first = await model.waitFor(
        (r) => model.requests.indexOf(r) >= before && r.sid !== undefined,
      );
      const sid = first.sid!;
      await waiterArmed(inst.http, sid);
      const A = newSid();
      const out = await postWaitingSeen(inst.env, A, sid, "please rebase onto main");
      expect(out.receipt).toMatchObject({ to: sid, from: A, route: "waiter" });
      expect(["seen", "read"]).toContain(out.receipt.state);
      const woke = await model.waitFor((r) => r.raw.includes("please rebase onto main"));
      expect(woke.sid).toBe(sid);
      expect(woke.raw).toContain(out.receipt.mid);
    } catch (error) {
      console.log(claude.pane());
      throw error;
    }
  }, 120_000);
});
