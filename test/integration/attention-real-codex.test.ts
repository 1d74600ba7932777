import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttentionItem } from "../../src/contract/attention.js";
import {
  FakeResponses,
  lastUserText,
  type ResponsesRequest,
  toolOutput,
} from "../helpers/fake-responses.js";
import { isolatedHome, runCli, type TestInstance } from "../helpers/instance.js";
import { caseItem, startHoldingInstance } from "../helpers/permission-hook.js";
import { onFailShow, type TmuxSession, until } from "../helpers/real-claude.js";
import {
  CODEX_BIN,
  paneOrGone,
  startCodexTui,
  trustHooks,
  typeInto,
  writeCodexConfig,
} from "../helpers/real-codex.js";

// The attention queue (DR-0062) with the REAL Codex CLI (npm @openai/codex
// 0.169.0) in tmux against a scripted Responses API: approvals on request, a
// read-only sandbox. The scripted model asks to run a command outside the
// sandbox; Codex's PermissionRequest hook, as `ccmsg plugin install codex`
// wrote and the person trusted it, asks the instance. Unlike Claude Code,
// Codex shows its own dialog only once the hook has left it: what the person
// decides with `ccmsg attention` is proven by what ran and by what the model
// receives next; with nobody deciding, Codex's dialog comes up after the hold.

/** The instance holds a hook this long (its test hook). */
const HOLD_MS = 6000;
const DIALOG = "Would you like to run the following command?";

let inst: TestInstance;
let model: FakeResponses;
let codex: TmuxSession;
let cwd: string;
let env: Record<string, string>;

/** "run case x" asks to `touch <cwd>/x.ran` outside the sandbox; the tool's
 * output ends the turn. Only the turn's own requests offer the tools (Codex
 * also asks the model for the thread's title). */
function script(req: ResponsesRequest) {
  if (!(req.body.tools ?? []).some((t) => t.name === "exec_command")) return { text: "a title" };
  if (toolOutput(req) !== undefined) return { text: "done" };
  const name = /run case ([a-z])\b/.exec(lastUserText(req))?.[1];
  if (name === undefined) return { text: "ready" };
  return { exec: `touch ${ran(name)}`, escalate: `case ${name} writes a file` };
}
const ran = (name: string) => join(cwd, `${name}.ran`);

beforeAll(async () => {
  const home = isolatedHome();
  inst = await startHoldingInstance(home, HOLD_MS);
  model = await FakeResponses.start(script);
  cwd = join(home.env.HOME!, "widgets");
  mkdirSync(cwd, { recursive: true });
  const codexHome = join(home.env.HOME!, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeCodexConfig(
    codexHome,
    model.baseUrl,
    cwd,
    'approval_policy = "on-request"\nsandbox_mode = "read-only"\n',
  );
  env = {
    HOME: home.env.HOME!,
    CODEX_HOME: codexHome,
    XDG_STATE_HOME: home.env.XDG_STATE_HOME!,
    XDG_CONFIG_HOME: home.env.XDG_CONFIG_HOME!,
    CCMSG_STATE_DIR: inst.stateDir,
    PATH: `${CODEX_BIN}:${process.env.PATH}`,
    TERM: "xterm-256color",
  };
  const installed = await runCli(["plugin", "install", "codex"], env);
  expect(installed.code, installed.stderr).toBe(0);
  await trustHooks(env, cwd);
  codex = await startCodexTui("ccmsg-attention-codex", env, cwd, []);
}, 60_000);

afterAll(async () => {
  await codex?.kill();
  await model?.close();
  await inst?.stop();
});

async function queue(): Promise<AttentionItem[]> {
  const r = await runCli(["attention", "--all", "--json"], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).items;
}

const itemOf = (name: string, ended = false) => caseItem(queue, name, ended, HOLD_MS + 20_000);

/** What the model received for case `name`'s command. */
function outputOf(name: string): Promise<string> {
  return model
    .waitFor((r) => r.raw.includes(`${name}.ran`) && toolOutput(r) !== undefined)
    .then((r) => toolOutput(r)!);
}

/** With Codex's screen and the instance's log printed when it fails. */
const withPane = (test: () => Promise<void>) =>
  onFailShow(
    () => [paneOrGone(codex), readFileSync(join(inst.stateDir, "daemon.log"), "utf8").slice(-3000)],
    test,
  );

describe("the real Codex's permission prompts in the attention queue", () => {
  it(
    "allowed with ccmsg attention: Codex held its dialog back, the command runs, and the model has its output",
    withPane(async () => {
      await typeInto(codex, "run case a");
      const item = await itemOf("a");
      expect(item).toMatchObject({ harness: "codex", kind: "permission", tool: "Bash", cwd });
      expect(item.end).toBeUndefined();
      // Codex asks its hook before its own dialog: none while the hook holds.
      expect(codex.pane()).not.toContain(DIALOG);
      const allow = await runCli(["attention", "allow", String(item.id), "--json"], env);
      expect(allow.code, allow.stderr).toBe(0);
      expect(JSON.parse(allow.stdout)).toMatchObject({
        outcome: "decided",
        item: { end: "allowed" },
      });
      const output = await outputOf("a");
      expect(existsSync(ran("a"))).toBe(true);
      expect(output).not.toMatch(/rejected|blocked/i);
      expect(codex.pane()).not.toContain(DIALOG);
    }),
    HOLD_MS + 40_000,
  );

  it(
    "denied with a message: the command does not run and the model receives the message",
    withPane(async () => {
      await typeInto(codex, "run case b");
      const item = await itemOf("b");
      const deny = await runCli(
        ["attention", "deny", String(item.id), "--message", "not on main, use the release branch"],
        env,
      );
      expect(deny.code, deny.stderr).toBe(0);
      expect(await outputOf("b")).toContain("not on main, use the release branch");
      expect(existsSync(ran("b"))).toBe(false);
      expect((await itemOf("b", true)).end).toBe("denied");
    }),
    HOLD_MS + 40_000,
  );

  it(
    "nobody answers within the hold: Codex's own dialog comes up, the queue says timed out, and the terminal's answer runs it",
    withPane(async () => {
      await typeInto(codex, "run case c");
      const asked = await itemOf("c");
      const ended = await itemOf("c", true);
      expect(ended.end).toBe("timed_out");
      expect((ended.ended_at ?? 0) - asked.asked_at).toBeGreaterThanOrEqual(HOLD_MS - 100);
      await until("Codex's dialog", () => (codex.pane().includes(DIALOG) ? true : undefined));
      // Answered in the terminal as a person would: "Yes, proceed".
      codex.key("y");
      await outputOf("c");
      expect(existsSync(ran("c"))).toBe(true);
      // A late decision is refused with the reason, and runs nothing more.
      const late = await runCli(["attention", "allow", String(ended.id), "--json"], env);
      expect(late.code).toBe(1);
      expect(JSON.parse(late.stdout)).toMatchObject({
        outcome: "refused",
        reason: expect.stringContaining("nobody decided in time"),
      });
    }),
    HOLD_MS + 40_000,
  );
});
