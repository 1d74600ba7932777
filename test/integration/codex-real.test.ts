import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import { FakeModel } from "../helpers/fake-model.js";
import {
  FakeResponses,
  lastUserText,
  type ResponsesRequest,
  toolOutput,
} from "../helpers/fake-responses.js";
import { CLI, runCli } from "../helpers/instance.js";
import { startMesh } from "../helpers/mesh.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { claudeSetup, idleSessionState, TmuxClaude, until } from "../helpers/real-claude.js";
import {
  CODEX_BIN as BIN,
  paneOrGone,
  startCodexTui,
  trustHooks,
  typeInto,
  writeCodexConfig,
} from "../helpers/real-codex.js";

// The REAL Codex CLI (npm @openai/codex 0.169.0, harness spec §11) in tmux
// against a scripted Responses API on loopback, with ccmsg's Codex wiring as
// `ccmsg plugin install codex` writes it, and the REAL Claude Code beside it
// on its own home's instance, the two linked by the mesh as on any machine
// running both (DR-0067): Codex accepts the hooks, a person trusts them
// (through Codex's own app-server, the path its /hooks screen takes), the
// session is present from its files, the Claude Code session's `ccmsg post`
// reaches the Codex model through `codex queue`, the `ccmsg reply` it runs
// reaches the Claude Code model through its messaging socket, and quitting
// leaves the Codex session paused.

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

describe("the real Codex with ccmsg's wiring", () => {
  it("installs, is present, gets a message from a real Claude Code session, its answer reaches that session's model, and it ends paused", async () => {
    // Instance 0 serves a Claude Code home, instance 1 the Codex home.
    const mesh = await startMesh(2, {
      envOf: (i, home): Record<string, string> =>
        i === 1
          ? {
              CODEX_HOME: join(home.HOME!, ".codex"),
              CODEX_THREAD_ID: newSid(),
              PATH: `${BIN}:${process.env.PATH}`,
            }
          : {},
    });
    cleanups.push(() => mesh.stop());
    await mesh.waitLinked();
    const [claudeSide, codexSide] = mesh.instances as [
      (typeof mesh.instances)[0],
      (typeof mesh.instances)[0],
    ];
    const home = codexSide.env;
    const codexHome = home.CODEX_HOME!;
    const cwd = join(home.HOME!, "widgets");
    mkdirSync(cwd, { recursive: true });
    mkdirSync(codexHome, { recursive: true });

    // A real Claude Code session of the Claude home. Its model, asked to,
    // posts to the Codex thread through the Bash tool; a message it receives
    // (route (a), its messaging socket) it acknowledges.
    const claudeHome = claudeSide.env.CLAUDE_CONFIG_DIR!;
    const claudeCwd = join(claudeSide.env.HOME!, "api");
    mkdirSync(claudeCwd, { recursive: true });
    let thread = "";
    const claudeModel = await FakeModel.start((req) => {
      // The last user message: Claude Code may end a request with a system one.
      const messages = (req.body.messages ?? []) as { role?: string }[];
      const last = JSON.stringify(messages.filter((m) => m.role === "user").at(-1) ?? "");
      if (last.includes('"tool_result"')) return { text: "asked" };
      if (!last.includes("ask codex")) return { text: "noted" };
      const post = [process.execPath, CLI, "post", thread, "please rebase onto main"];
      const command = [...post, "--state-dir", claudeSide.stateDir].map(shellWord).join(" ");
      return { tool: { name: "Bash", input: { command, description: "ask codex" } } };
    });
    cleanups.push(() => claudeModel.close());
    const claudeEnv = claudeSetup(
      { HOME: claudeSide.env.HOME!, CLAUDE_CONFIG_DIR: claudeHome },
      claudeCwd,
      claudeModel.url,
      { XDG_RUNTIME_DIR: claudeSide.env.XDG_RUNTIME_DIR! },
    );
    const claude = new TmuxClaude("ccmsg-codex-peer", claudeEnv, claudeCwd, [
      "--permission-mode",
      "default",
      "--allowedTools",
      "Bash",
    ]);
    cleanups.push(() => claude.kill());
    const A = (await idleSessionState(claudeHome)).sessionId as string;

    // The Codex model: a turn that received a ccmsg message answers it as
    // the message says to (`Reply with: ccmsg reply <mid> --to <sid> <text>`)
    // through its exec_command tool; the tool's output ends the turn.
    const script = (req: ResponsesRequest) => {
      if (toolOutput(req) !== undefined) return { text: "replied" };
      const how = /Reply with: ccmsg reply (\S+) --to (\S+)/.exec(lastUserText(req));
      if (how === null) return { text: "ready" };
      const reply = [
        process.execPath,
        CLI,
        "reply",
        how[1]!,
        "--to",
        how[2]!,
        "on it, rebasing now",
      ];
      return { exec: reply.map(shellWord).join(" ") };
    };
    const model = await FakeResponses.start(script);
    cleanups.push(() => model.close());
    const person = writeCodexConfig(codexHome, model.baseUrl, cwd);

    // Installed as a person would, the real codex on PATH.
    const codexEnv = {
      HOME: home.HOME!,
      CODEX_HOME: codexHome,
      XDG_STATE_HOME: home.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: home.XDG_CONFIG_HOME!,
      PATH: `${BIN}:${process.env.PATH}`,
      TERM: "xterm-256color",
    };
    const installed = await runCli(["plugin", "install", "codex", "--json"], codexEnv);
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(installed.stdout).needs.map((n: { what: string }) => n.what)).toEqual([
      "trust ccmsg's hooks: Codex skips hooks nobody has reviewed",
    ]);
    // Codex reads every ccmsg hook and finds no error; the person trusts them.
    const { before, after } = await trustHooks(codexEnv, cwd);
    const ours = (hooks: typeof before) =>
      hooks
        .filter((h) => h.command.includes("/plugins/codex/ccmsg-"))
        .map((h) => `${h.eventName} ${h.trustStatus}`);
    expect(ours(before).sort()).toEqual([
      "permissionRequest untrusted",
      "sessionEnd untrusted",
      "sessionStart untrusted",
      "stop untrusted",
      "userPromptSubmit untrusted",
    ]);
    expect(ours(after).every((h) => h.endsWith(" trusted"))).toBe(true);

    const codex = await startCodexTui("ccmsg-codex", codexEnv, cwd, [
      "--dangerously-bypass-approvals-and-sandbox",
    ]);
    cleanups.push(() => codex.kill());
    try {
      await typeInto(codex, "hello");
      const first = await model.waitFor((r) => lastUserText(r).includes("hello"));
      const T = first.thread!;

      // Present from its files: Codex holds the thread's lock; the session
      // greeted the Codex home's instance (its hook names the thread).
      const peers = async (sock: string) => {
        const p = await Peer.unix(sock);
        await p.helloUser();
        const snap = (await p.subscribe("peers")).data as {
          peers: { sid: string; state: string; cwd?: string }[];
          last_live: { sid: string; state: string }[];
        };
        p.close();
        return snap;
      };
      const row = await until("the Codex session listed", async () =>
        (await peers(codexSide.socket)).peers.find((r) => r.sid === T),
      );
      expect(row).toMatchObject({ state: "live_unmanaged", cwd });

      // A message from the Claude Code session reaches the Codex model...
      await until("the model's first turn to end", () =>
        codex.pane().includes("ready") ? true : undefined,
      );
      thread = T;
      claude.type("ask codex to rebase");
      const woke = await model.waitFor((r) => lastUserText(r).includes("please rebase onto main"));
      expect(woke.thread).toBe(T);
      expect(lastUserText(woke)).toContain(`--to ${A}`);
      // ...and the answer it ran reaches the Claude Code session's model.
      const answered = await claudeModel.waitFor((r) => r.raw.includes("on it, rebasing now"));
      expect(answered.sid).toBe(A);
      // As the request body spells the rendering's attribute (JSON-escaped).
      expect(answered.raw).toContain(JSON.stringify(`ccmsg-from="${T}"`).slice(1, -1));

      // Quitting ends the session as paused (its SessionEnd hook).
      await typeInto(codex, "/quit");
      const ended = await until("the session paused", async () =>
        (await peers(codexSide.socket)).last_live.find((r) => r.sid === T && r.state === "paused"),
      );
      expect(ended.state).toBe("paused");
    } catch (error) {
      console.log(paneOrGone(codex));
      console.log(claude.pane());
      console.log(readFileSync(join(codexSide.stateDir, "daemon.log"), "utf8").slice(-3000));
      throw error;
    }

    // Codex wrote its trust into config.toml; uninstalling takes out only ccmsg's part.
    expect((await runCli(["plugin", "uninstall", "codex"], codexEnv)).code).toBe(0);
    const left = readFileSync(join(codexHome, "config.toml"), "utf8");
    expect(left.startsWith(person)).toBe(true);
    expect(left).toContain("[hooks.state");
    expect(left).not.toContain("mcp_servers.ccmsg");
  }, 180_000);
});
