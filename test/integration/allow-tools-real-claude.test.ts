import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/index.js";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import { FakeModel, type ModelRequest } from "../helpers/fake-model.js";
import { CLI, isolatedHome, ROOT, runCli, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { claudeSetup, TmuxClaude, until, waiterArmed } from "../helpers/real-claude.js";

// `ccmsg plugin install claude --allow-tools` (DR-0055) against the REAL
// Claude Code 2.1.328 in tmux, in its default permission mode (every Bash
// command asks): a session woken by a message runs `ccmsg reply` with no
// permission prompt, because the install added the allow rules; uninstall
// takes them out again.

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

describe("ccmsg's own tools without a prompt, with the real Claude Code", () => {
  it("with --allow-tools, a woken session runs ccmsg reply with no permission prompt; uninstall removes the rules", async () => {
    const home = isolatedHome();
    // The waiter wakes the session (route (a) is tested on its own).
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ direct_delivery: false }),
    );
    const inst = await startInstance({ env: home.env });
    cleanups.push(() => inst.stop());
    // `ccmsg` on PATH, as a person has it: the rules name the command.
    const bin = join(home.root, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "ccmsg"),
      `#!/bin/sh\nexec ${shellWord(process.execPath)} ${shellWord(CLI)} "$@"\n`,
    );
    chmodSync(join(bin, "ccmsg"), 0o755);
    const B = newSid();
    const script = (req: ModelRequest) => {
      const last = JSON.stringify(req.body.messages?.at(-1) ?? "");
      if (last.includes('"tool_result"')) return { text: "done" };
      const mid = /ccmsg-mid=\\"([^"\\]+)\\"/.exec(last)?.[1];
      if (mid === undefined) return { text: "ready" };
      const command = `ccmsg reply ${mid} --to ${B} --state-dir ${shellWord(inst.stateDir)} ${shellWord("got it, rebasing")}`;
      return { tool: { name: "Bash", input: { command, description: "answer the message" } } };
    };
    const model = await FakeModel.start(script);
    cleanups.push(() => model.close());
    const cwd = join(home.env.HOME!, "widgets");
    mkdirSync(cwd, { recursive: true });
    const claudeEnv = claudeSetup(
      { HOME: home.env.HOME!, CLAUDE_CONFIG_DIR: home.env.CLAUDE_CONFIG_DIR! },
      cwd,
      model.url,
      { PATH: `${bin}:${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` },
    );
    const cliEnv = {
      ...claudeEnv,
      XDG_STATE_HOME: home.env.XDG_STATE_HOME,
      XDG_CONFIG_HOME: home.env.XDG_CONFIG_HOME,
      CCMSG_STATE_DIR: inst.stateDir,
    };
    const settings = join(home.env.CLAUDE_CONFIG_DIR!, "settings.json");
    const allowed = () =>
      ((JSON.parse(readFileSync(settings, "utf8")).permissions?.allow ?? []) as string[]).filter(
        (r) => r.includes("ccmsg"),
      );

    const installed = await runCli(
      ["plugin", "install", "claude", "--allow-tools", "--json"],
      cliEnv,
    );
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(installed.stdout).allow_rules.added).toContain("Bash(ccmsg reply:*)");
    expect(allowed()).toContain("Bash(ccmsg reply:*)");

    const sender = await Peer.unix(inst.socket);
    cleanups.push(() => sender.close());
    await sender.helloSession(B, { cwd: "/tmp/b", title: "reviewer" });
    await sender.subscribe("inbox");
    const claude = new TmuxClaude("ccmsg-allow", claudeEnv, cwd, ["--permission-mode", "default"]);
    cleanups.push(() => claude.kill());
    try {
      await until("the prompt", () => (claude.pane().includes("\u276f") ? true : undefined));
      claude.type("hello");
      const first = await model.waitFor((r) => r.sid !== undefined);
      const sid = first.sid!;
      await waiterArmed(inst.http, sid);
      const reply = sender.next((f) => f.ev === "topic" && f.topic === "inbox", 30_000);
      await sender.call("message_send", { to: sid, text: "please rebase onto main" });
      // Woken, it ran the reply through Bash: nobody answered a dialog.
      const [answer] = (await reply).data as InboxMessage[];
      expect(answer).toMatchObject({ from: sid, text: "got it, rebasing" });
      expect(claude.pane()).not.toContain("Do you want to proceed?");
    } catch (error) {
      console.log(claude.pane());
      throw error;
    }
    await claude.kill();

    const removed = await runCli(["plugin", "uninstall", "claude", "--json"], cliEnv);
    expect(removed.code, removed.stderr).toBe(0);
    expect(allowed()).toEqual([]);
  }, 120_000);
});
