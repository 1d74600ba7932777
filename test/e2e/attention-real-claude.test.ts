import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttentionItem } from "../../src/contract/attention.js";
import { FakeModel, type ModelRequest } from "../helpers/fake-model.js";
import { ownerHeaders } from "../helpers/http.js";
import { isolatedHome, ROOT, runCli, type TestInstance } from "../helpers/instance.js";
import { caseItem, startHoldingInstance } from "../helpers/permission-hook.js";
import {
  claudeSetup,
  idleSessionState,
  onFailShow,
  TmuxClaude,
  until,
} from "../helpers/real-claude.js";
import { openConsole, sharedBrowser, viewUrl } from "./browser.js";

// The attention queue (DR-0062) with the REAL Claude Code 2.1.328 in tmux,
// in its default permission mode, ccmsg's plugin installed: the scripted
// model asks for a Bash command, Claude Code opens its permission dialog and
// its PermissionRequest http hook asks the instance. What the person decides
// elsewhere — Allow clicked in the console (headless Chromium), a deny with
// a message from the CLI — is proven by what the model receives next; with
// nobody deciding, the dialog in the terminal is the one that answers.

const BIN = join(ROOT, "node_modules", ".bin");
/** The instance holds a hook this long (its test hook). */
const HOLD_MS = 8000;

let inst: TestInstance;
let model: FakeModel;
let claude: TmuxClaude;
let cwd: string;
let cliEnv: Record<string, string | undefined>;
let sid: string;
const b = sharedBrowser();
let page: Page;

/** "run case x" asks for `echo out-x > <cwd>/x.ran`, which Claude Code asks
 * permission for once (a compound command or one that makes a directory is
 * asked for in parts: a dialog, and an item, for each); its tool result ends
 * the turn. */
function script(req: ModelRequest) {
  if (!req.raw.includes('"name":"Bash"')) return { text: "ok" };
  const last = JSON.stringify(req.body.messages?.at(-1) ?? "");
  if (last.includes('"tool_result"')) return { text: "done" };
  const name = [...req.raw.matchAll(/run case ([a-z])\b/g)].at(-1)?.[1];
  if (name === undefined) return { text: "ready" };
  const command = `echo out-${name} > ${join(cwd, `${name}.ran`)}`;
  return { tool: { name: "Bash", input: { command, description: `case ${name}` } } };
}

beforeAll(async () => {
  const home = isolatedHome();
  inst = await startHoldingInstance(home, HOLD_MS);
  model = await FakeModel.start(script);
  cwd = join(home.env.HOME!, "widgets");
  mkdirSync(cwd, { recursive: true });
  const claudeEnv = claudeSetup(
    { HOME: home.env.HOME!, CLAUDE_CONFIG_DIR: home.env.CLAUDE_CONFIG_DIR! },
    cwd,
    model.url,
    { PATH: `${BIN}:${process.env.PATH}`, XDG_CONFIG_HOME: home.env.XDG_CONFIG_HOME! },
  );
  cliEnv = {
    ...claudeEnv,
    XDG_STATE_HOME: home.env.XDG_STATE_HOME,
    CCMSG_STATE_DIR: inst.stateDir,
  };
  const installed = await runCli(["plugin", "install", "claude", "--json"], cliEnv);
  expect(installed.code, installed.stderr).toBe(0);
  claude = new TmuxClaude("ccmsg-attention", claudeEnv, cwd, ["--permission-mode", "default"]);
  // Up (its state file written) before the console is opened.
  await idleSessionState(home.env.CLAUDE_CONFIG_DIR!);
  ({ page } = await openConsole(b.browser, inst));
  await page.goto(viewUrl(page, "#/attention"));
}, 60_000);

afterAll(async () => {
  // Gone before its home is removed (it writes there to the end).
  await claude?.kill();
  await model?.close();
  await inst?.stop();
});

/** The queue as the console reads it: every kept item, newest first. */
async function queue(): Promise<AttentionItem[]> {
  const res = await fetch(`${inst.http}api/attention`, { headers: ownerHeaders(inst.http) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: AttentionItem[] }).items;
}

const itemOf = (name: string, ended = false) => caseItem(queue, name, ended, HOLD_MS + 20_000);

/** Type case `name`; its item, pending. */
async function ask(name: string): Promise<AttentionItem> {
  claude.type(`run case ${name}`);
  const item = await itemOf(name);
  sid = item.sid;
  expect(item).toMatchObject({ harness: "claude", tool: "Bash", kind: "permission" });
  expect(item.end).toBeUndefined();
  return item;
}

/** The model's request after case `name`'s tool ran (or was refused). */
const toolResult = (name: string) =>
  model.waitFor(
    (r) =>
      r.sid === sid &&
      JSON.stringify(r.body.messages?.at(-1) ?? "").includes('"tool_result"') &&
      [...r.raw.matchAll(/run case ([a-z])\b/g)].at(-1)?.[1] === name,
    HOLD_MS + 20_000,
  );

/**
 * Until case `name`'s tool result reaches the model, answer each of its
 * prompts as they come (`answer` decides an item from elsewhere; without it
 * the dialog is answered in the terminal); the items of the case.
 */
async function answerEach(
  name: string,
  answer?: (item: AttentionItem) => Promise<unknown>,
): Promise<{ result: ModelRequest; items: AttentionItem[] }> {
  const result = toolResult(name);
  let done = false;
  void result.finally(() => {
    done = true;
  });
  const answered = new Set<number>();
  while (!done) {
    const mine = (await queue()).filter((i) => i.input.includes(`${name}.ran`));
    for (const i of mine.filter((i) => i.end === undefined && !answered.has(i.id))) {
      answered.add(i.id);
      if (answer !== undefined) await answer(i);
    }
    if (answer === undefined && claude.pane().includes("Do you want to proceed?"))
      claude.key("Enter");
    await new Promise((r) => setTimeout(r, 200));
  }
  const items = (await queue()).filter((i) => i.input.includes(`${name}.ran`));
  return { result: await result, items };
}

/** Until the session is back at its prompt. */
const idle = () =>
  until("the session's turn to end", () =>
    /\u276f\s*$/m.test(claude.pane()) && !claude.pane().includes("Do you want to proceed?")
      ? true
      : undefined,
  );

/** With the session's screen printed when it fails. */
const onFailShowPane = (test: () => Promise<void>) => onFailShow(() => [claude.pane()], test);

describe("the attention queue with the real Claude Code", () => {
  it(
    "Allow in the console runs the command: it wrote its file, and the model hears it ran",
    onFailShowPane(async () => {
      await ask("a");
      // Claude Code may ask more than once for one command (its path checks
      // each open a dialog): each is an item, each allowed in the console.
      const { result, items } = await answerEach("a", async (i) => {
        const shown = page.locator(`.att-list:not(.att-ended) [data-attention='${i.id}']`);
        await shown.waitFor({ timeout: 1000 });
        expect(await shown.locator(".att-input").textContent()).toContain("a.ran");
        await shown.locator("[data-decide='allow']").click();
      });
      expect(JSON.stringify(result.body.messages?.at(-1))).not.toContain('"is_error":true');
      expect(readFileSync(join(cwd, "a.ran"), "utf8")).toBe("out-a\n");
      expect(items.map((i) => i.end)).toEqual(items.map(() => "allowed"));
      await idle();
    }),
    90_000,
  );

  it(
    "Deny with a message from the CLI: the command does not run and the model receives the message",
    onFailShowPane(async () => {
      const item = await ask("b");
      const denied = await runCli(
        ["attention", "deny", String(item.id), "--message", "not on main, please", "--json"],
        cliEnv,
      );
      expect(denied.code, denied.stderr).toBe(0);
      const result = JSON.stringify((await toolResult("b")).body.messages?.at(-1));
      expect(result).toContain('"is_error":true');
      expect(result).toContain("not on main, please");
      expect(existsSync(join(cwd, "b.ran"))).toBe(false);
      expect((await itemOf("b", true)).end).toBe("denied");
      await idle();
    }),
    90_000,
  );

  it(
    "answered in the terminal first: the command runs and the queue says so",
    onFailShowPane(async () => {
      await ask("c");
      await answerEach("c");
      expect(existsSync(join(cwd, "c.ran"))).toBe(true);
      // The instance sees the answer in the session's state file (polled).
      const items = await until("c's items to end", async () => {
        const mine = (await queue()).filter((i) => i.input.includes("c.ran"));
        return mine.every((i) => i.end !== undefined) ? mine : undefined;
      });
      expect(items.map((i) => i.end)).toEqual(items.map(() => "answered_in_terminal"));
      await idle();
    }),
    90_000,
  );

  it(
    "nobody answers within the hold: the hook leaves the dialog up and the queue says timed out",
    onFailShowPane(async () => {
      const item = await ask("d");
      const ended = await itemOf("d", true);
      expect(ended.end).toBe("timed_out");
      expect((ended.ended_at ?? 0) - item.asked_at).toBeGreaterThanOrEqual(HOLD_MS - 100);
      // The dialog is still the terminal's to answer.
      expect(claude.pane()).toContain("Do you want to proceed?");
      expect(existsSync(join(cwd, "d.ran"))).toBe(false);
      const { items } = await answerEach("d");
      expect(existsSync(join(cwd, "d.ran"))).toBe(true);
      // The late terminal answer does not reopen or change the item.
      expect(items.find((i) => i.id === item.id)?.end).toBe("timed_out");
    }),
    90_000,
  );
});
