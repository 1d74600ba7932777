import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/index.js";
import { shellWord } from "../../src/harness/plugin/command-line.js";
import { FakeModel, type ModelRequest } from "../helpers/fake-model.js";
import {
  CLI,
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { CLAUDE, claudeSetup, TmuxClaude, until, waiterArmed } from "../helpers/real-claude.js";

// The real Claude Code (npm @anthropic-ai/claude-code, a devDependency) with
// ccmsg's plugin installed through `ccmsg plugin install claude`, against a
// scripted model on loopback (harness spec §11). What is real: Claude Code's
// plugin loading, its hooks and their payloads, asyncRewake, the Bash tool,
// the transcript. What is scripted: the model's answers.

const BIN = join(ROOT, "node_modules", ".bin");

let inst: TestInstance;
let model: FakeModel;
let cwd: string;
let claudeEnv: Record<string, string>;
let sender: Peer;
const B = newSid();

/** The model: a turn that received a cross-session message answers it with
 * `ccmsg reply` through the Bash tool; a tool result ends the turn. */
function script(req: ModelRequest) {
  const last = JSON.stringify(req.body.messages?.at(-1) ?? "");
  if (last.includes('"tool_result"')) return { text: "done" };
  const mid = /ccmsg-mid=\\"([^"\\]+)\\"/.exec(last)?.[1];
  if (mid === undefined) return { text: "ready" };
  const command = [process.execPath, CLI, "reply", mid, "--to", B, "--state-dir", inst.stateDir]
    .map(shellWord)
    .concat(shellWord("got it, rebasing"))
    .join(" ");
  return { tool: { name: "Bash", input: { command, description: "answer the message" } } };
}

beforeAll(async () => {
  // These tests are about the hooks: delivery straight into the harness's
  // socket (route (a), which would reach an idle session first) is off here
  // and tested on its own in direct-delivery-real-claude.test.ts.
  const home = isolatedHome();
  mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
  writeFileSync(
    join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
    JSON.stringify({ direct_delivery: false }),
  );
  inst = await startInstance({ env: home.env });
  model = await FakeModel.start(script);
  cwd = join(inst.env.HOME!, "widgets");
  mkdirSync(cwd, { recursive: true });
  claudeEnv = claudeSetup(
    { HOME: inst.env.HOME!, CLAUDE_CONFIG_DIR: inst.env.CLAUDE_CONFIG_DIR! },
    cwd,
    model.url,
    // The real `claude` on PATH, for `ccmsg plugin install` to register with.
    { PATH: `${BIN}:${process.env.PATH}` },
  );
  // Installed as a person would, with the real `claude` on PATH registering it.
  const installed = await runCli(["plugin", "install", "claude", "--json"], {
    ...claudeEnv,
    XDG_STATE_HOME: inst.env.XDG_STATE_HOME,
    XDG_CONFIG_HOME: inst.env.XDG_CONFIG_HOME,
    CCMSG_STATE_DIR: inst.stateDir,
  });
  expect(installed.code, installed.stderr).toBe(0);
  expect(JSON.parse(installed.stdout).commands.every((c: { ran: boolean }) => c.ran)).toBe(true);
  sender = await Peer.unix(inst.socket);
  await sender.helloSession(B, { cwd: "/tmp/b", title: "reviewer" });
  await sender.subscribe("inbox");
}, 60_000);

afterAll(async () => {
  sender?.close();
  await model?.close();
  await inst?.stop();
  expect(contractViolations).toEqual([]);
});

async function peers(): Promise<{
  peers: { sid: string }[];
  last_live: Record<string, unknown>[];
}> {
  const p = await Peer.unix(inst.socket);
  await p.helloUser();
  const snap = await p.subscribe("peers");
  p.close();
  return snap.data as never;
}

describe("the real Claude Code with ccmsg's plugin", () => {
  it("a print-mode run greets, declares its end, and exits without waiting on the waiter", async () => {
    const run = spawn(CLAUDE, ["-p", "hello", "--output-format", "json"], {
      cwd,
      env: claudeEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    run.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    // Claude Code waits ~30 s for background hooks before a print run exits;
    // the waiter stands aside in such runs, so this ends long before that.
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("claude -p still running after 20 s")),
        20_000,
      );
      run.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    const { session_id: sid, result } = JSON.parse(out) as { session_id: string; result: string };
    expect(result).toBe("ready");
    // hello --hook announced it with its transcript; stopping --hook made its
    // end a pause.
    const row = await until("the run's last_live row", async () =>
      (await peers()).last_live.find((r) => r.sid === sid),
    );
    expect(row.state).toBe("paused");
    expect(row.transcript_path).toBe(
      join(claudeEnv.CLAUDE_CONFIG_DIR!, "projects", cwd.replaceAll("/", "-"), `${sid}.jsonl`),
    );
  }, 60_000);

  it("an idle interactive session is woken by a message, answers it with ccmsg reply, and ends paused", async () => {
    const claude = new TmuxClaude("ccmsg-hooks", claudeEnv, cwd, [
      "--permission-mode",
      "default",
      "--allowedTools",
      "Bash",
    ]);
    const before = model.requests.length;
    try {
      // A person types a first prompt once the input box is up.
      await until("the prompt", () => (claude.pane().includes("\u276f") ? true : undefined));
      claude.type("hello");
      // Its first turn ends; Stop arms the waiter.
      const first = await model.waitFor(
        (r) => model.requests.indexOf(r) >= before && r.sid !== undefined,
      );
      const sid = first.sid!;
      await waiterArmed(inst.http, sid);

      const reply = sender.next((f) => f.ev === "topic" && f.topic === "inbox", 30_000);
      expect(
        await sender.call("message_send", { to: sid, text: "please rebase onto main" }),
      ).toEqual({
        delivered: true,
      });
      // The session woke: the model got the message in the contract's wording.
      const woke = await model.waitFor((r) => r.raw.includes("please rebase onto main"));
      expect(woke.sid).toBe(sid);
      expect(woke.raw).toContain("cross-session-message");
      // ...and answered through the Bash tool: the reply reaches the sender.
      const [answer] = (await reply).data as InboxMessage[];
      expect(answer).toMatchObject({ from: sid, text: "got it, rebasing" });
      expect(answer!.reply_to).toMatch(/\//);

      // What it did, read from its real transcript: the typed items (each
      // checked against the contract by the peer) and the raw lines behind them.
      const person = await Peer.unix(inst.socket);
      await person.helloUser();
      const items = await until("the reply's result in the transcript", async () => {
        const r = await person.call<{ items: Record<string, unknown>[] }>("transcript_items_read", {
          sid,
        });
        const call = r.items.find((i) => i.type === "tool:Bash" && i.role === "use");
        return call?.result_item !== undefined ? r.items : undefined;
      });
      const byType = (t: string) => items.filter((i) => i.type === t);
      // Every record the real harness wrote is placed (bookkeeping gives none).
      expect(byType("system:unknown")).toEqual([]);
      expect(byType("message:user:in").map((i) => i.text)).toContain("hello");
      expect(byType("message:session:in").map((i) => i.text)).toContain("please rebase onto main");
      const call = byType("tool:Bash").find((i) => i.role === "use")!;
      expect(call.command).toMatch(/\breply\b/);
      const result = items.find((i) => i.id === call.result_item)!;
      expect(result).toMatchObject({ role: "result", parent_item: call.id });
      expect(byType("message:session:out").length).toBeGreaterThan(0);
      const source = call.source as { offset: number; bytes: number };
      const raw = await person.call<{ lines: string[] }>("transcript_read", {
        sid,
        before: source.offset + source.bytes,
        max_bytes: source.bytes,
      });
      expect(raw.lines).toHaveLength(1);
      expect(JSON.parse(raw.lines[0]!).uuid).toBe(call.uuid);
      // Its live status: the context of its last turn, from the same transcript.
      const status = await person.subscribe(`session_status:${sid}`);
      const context = (status.data as { context?: { tokens: number; model: string } }).context;
      expect(context?.model).toBe(woke.body.model);
      expect(context?.tokens).toBeGreaterThan(0);
      person.close();

      claude.type("/exit");
      const row = await until("the session's last_live row", async () =>
        (await peers()).last_live.find((r) => r.sid === sid && r.state === "paused"),
      );
      expect(row.state).toBe("paused");
    } catch (error) {
      console.log(claude.pane());
      console.log(model.requests.map((r) => `${r.sid} ${r.raw.slice(-200)}`).join("\n"));
      throw error;
    } finally {
      await claude.kill();
    }
  }, 90_000);
});
