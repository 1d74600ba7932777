import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import {
  FakeResponses,
  lastUserText,
  type ResponsesRequest,
  toolOutput,
} from "../helpers/fake-responses.js";
import { CLI, ROOT, runCli } from "../helpers/instance.js";
import { startMesh } from "../helpers/mesh.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { TmuxSession, until } from "../helpers/real-claude.js";

// The REAL Codex CLI (npm @openai/codex 0.169.0, harness spec §11) in tmux
// against a scripted Responses API on loopback, with ccmsg's Codex wiring as
// `ccmsg plugin install codex` writes it: Codex accepts the hooks, a person
// trusts them (through Codex's own app-server, the path its /hooks screen
// takes), the session is present from its files, a message from a session
// on another instance (a Claude Code home's, linked by the mesh as on any
// machine running both) reaches the Codex model through `codex queue`, the
// answer it runs comes back, and quitting leaves the session paused.

const BIN = join(ROOT, "node_modules", ".bin");
const CODEX = join(BIN, "codex");
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

/** Trust every hook Codex lists as untrusted, as its /hooks screen does:
 * `hooks/list` gives each hook's current hash, `config/batchWrite` records it
 * under `hooks.state` in the person's config.toml. Returns the hooks after. */
async function trustHooks(env: Record<string, string>, cwd: string) {
  const child = spawn(CODEX, ["app-server"], { env, cwd, stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  let buffered = "";
  child.stdout.on("data", (c: Buffer) => {
    buffered += c.toString("utf8");
    for (let i = buffered.indexOf("\n"); i !== -1; i = buffered.indexOf("\n")) {
      const m = JSON.parse(buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
      if (typeof m.id === "number") waiting.get(m.id)?.(m);
    }
  });
  let next = 0;
  const call = <T>(method: string, params: unknown) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (m) =>
        m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result as T),
      );
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  type Hook = {
    key: string;
    eventName: string;
    command: string;
    currentHash: string;
    trustStatus: string;
  };
  type Listed = { data: { hooks: Hook[]; errors: unknown[] }[] };
  try {
    await call("initialize", { clientInfo: { name: "ccmsg-test", version: "0" } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "initialized" })}\n`);
    const listed = await call<Listed>("hooks/list", { cwds: [cwd] });
    expect(listed.data[0]!.errors).toEqual([]);
    const untrusted = listed.data[0]!.hooks.filter((h) => h.trustStatus !== "trusted");
    const state = Object.fromEntries(
      untrusted.map((h) => [h.key, { trusted_hash: h.currentHash }]),
    );
    await call("config/batchWrite", {
      edits: [{ keyPath: "hooks.state", value: state, mergeStrategy: "upsert" }],
      filePath: null,
      expectedVersion: null,
      reloadUserConfig: true,
    });
    return {
      before: listed.data[0]!.hooks,
      after: (await call<Listed>("hooks/list", { cwds: [cwd] })).data[0]!.hooks,
    };
  } finally {
    child.kill();
  }
}

describe("the real Codex with ccmsg's wiring", () => {
  it("installs, is present, gets a message from another instance's session, answers it, and ends paused", async () => {
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

    // A session of the Claude home, listening to its inbox.
    const A = newSid();
    const a = await Peer.unix(claudeSide.socket);
    cleanups.push(() => a.close());
    await a.helloSession(A, { cwd: "/work/api", title: "reviewer" });
    await a.subscribe("inbox");

    // The Codex model: a turn that received a ccmsg message answers it with
    // `ccmsg reply` through its exec_command tool; the tool's output ends it.
    const script = (req: ResponsesRequest) => {
      if (toolOutput(req) !== undefined) return { text: "replied" };
      const mid = /ccmsg-mid="([^"]+)"/.exec(lastUserText(req))?.[1];
      if (mid === undefined) return { text: "ready" };
      const reply = [process.execPath, CLI, "reply", mid, "--to", A, "on it, rebasing now"];
      return { exec: reply.map(shellWord).join(" ") };
    };
    const model = await FakeResponses.start(script);
    cleanups.push(() => model.close());
    const person = `# the person's own settings
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "${model.baseUrl}"
wire_api = "responses"

[projects."${cwd}"]
trust_level = "trusted"

# The TUI runs its threads itself: Codex's background app-server (on by
# default) would keep a thread, and this test's home, past the session.
[features]
daemon_auto_start = false
`;
    writeFileSync(join(codexHome, "config.toml"), person);

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

    const codex = new TmuxSession("ccmsg-codex", codexEnv, cwd, [
      CODEX,
      "--dangerously-bypass-approvals-and-sandbox",
    ]);
    cleanups.push(() => codex.kill());
    try {
      await until("the prompt", () => (codex.pane().includes("\u203a") ? true : undefined));
      // Typed, then Enter once it shows: Codex takes keys that come at once
      // for a paste, Enter included.
      const typed = (text: string) => {
        codex.draft(text);
        return until(`"${text}" typed`, () =>
          codex.pane().includes(`\u203a ${text}`) ? true : undefined,
        );
      };
      await typed("hello");
      codex.key("Enter");
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

      // A message from the other instance's session reaches the Codex model...
      const reply = a.next((f) => f.ev === "topic" && f.topic === "inbox", 60_000);
      await until("the model's first turn to end", () =>
        codex.pane().includes("ready") ? true : undefined,
      );
      expect(await a.call("message_send", { to: T, text: "please rebase onto main" })).toEqual({
        delivered: true,
      });
      const woke = await model.waitFor((r) => lastUserText(r).includes("please rebase onto main"));
      expect(woke.thread).toBe(T);
      const mid = /ccmsg-mid="([^"]+)"/.exec(lastUserText(woke))?.[1];
      expect(mid).toBeDefined();
      // ...and the answer it ran comes back to the sender.
      const frame = await reply;
      const got = frame.data as { from: string; text: string; reply_to: string }[];
      expect(got).toEqual([
        expect.objectContaining({ from: T, text: "on it, rebasing now", reply_to: mid }),
      ]);

      // Quitting ends the session as paused (its SessionEnd hook).
      await typed("/quit");
      codex.key("Enter");
      const ended = await until("the session paused", async () =>
        (await peers(codexSide.socket)).last_live.find((r) => r.sid === T && r.state === "paused"),
      );
      expect(ended.state).toBe("paused");
    } catch (error) {
      console.log(
        (() => {
          try {
            return codex.pane();
          } catch {
            return "(codex has exited)";
          }
        })(),
      );
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
