import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { promptBox } from "../../src/harness/claude/prompt-box.js";
import { FakeModel, type ModelRequest } from "../helpers/fake-model.js";
import { isolatedHome, runCli, startInstance } from "../helpers/instance.js";
import { contractViolations, Peer } from "../helpers/peer.js";
import { claudeSetup, idleSessionState, TmuxClaude, until } from "../helpers/real-claude.js";

// A person's words reach the model as the person's (DR-0055), against the
// REAL Claude Code 2.1.328 in tmux and a scripted model: typed into the
// session's pane when its box is empty, so the model gets a plain user turn;
// otherwise (someone's draft in the box, no pane known) a message, which
// Claude Code frames as from another session — and the sender is told which.

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  expect(contractViolations.splice(0)).toEqual([]);
});

/** The text blocks of the last user message of a model request (the
 * environment reminders may follow it as a system-role message). */
function lastUserTexts(r: ModelRequest): string[] {
  const messages = (r.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.filter((m) => m.role === "user").at(-1);
  if (last === undefined) return [];
  if (typeof last.content === "string") return [last.content];
  return (last.content as { type: string; text?: string }[])
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "");
}

/** A real interactive session in its own tmux server, idle with its state
 * file up; `paneKnown`: its state file names its pane. */
async function idleSession(name: string, paneKnown: boolean) {
  const { root, env } = isolatedHome();
  const claudeHome = env.CLAUDE_CONFIG_DIR!;
  const cwd = join(root, "work");
  mkdirSync(cwd);
  const ran = join(cwd, "ran");
  // "RUN IT" typed by the person makes the model ask for a command, which
  // opens the permission dialog.
  const model = await FakeModel.start((r) =>
    lastUserTexts(r).includes("RUN IT")
      ? { tool: { name: "Bash", input: { command: `touch ${ran}`, description: "touch" } } }
      : { text: "noted" },
  );
  cleanups.push(() => model.close());
  const claudeEnv = claudeSetup(
    { HOME: env.HOME!, CLAUDE_CONFIG_DIR: claudeHome },
    cwd,
    model.url,
    { XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR! },
  );
  const claude = new TmuxClaude(name, claudeEnv, cwd, ["--permission-mode", "default"], {
    paneKnown,
  });
  cleanups.push(() => claude.kill());
  const sessions = join(claudeHome, "sessions");
  const state = await idleSessionState(claudeHome, (row) => row.waitingFor === undefined);
  const harnessPid = state.pid as number;
  await until("the empty input box", () =>
    promptBox(claude.pane()) === "empty" ? true : undefined,
  );
  const inst = await startInstance({ env });
  cleanups.push(() => inst.stop());
  const person = await Peer.unix(inst.socket);
  cleanups.push(() => person.close());
  await person.helloUser();
  const status = () => {
    const file = join(sessions, `${harnessPid}.json`);
    try {
      return JSON.parse(readFileSync(file, "utf8")) as { status?: string; waitingFor?: string };
    } catch {
      return {};
    }
  };
  const sid = state.sessionId as string;
  return { env, model, claude, sid, person, tmux: state.tmux, ran, status };
}

describe("a person's message to a real Claude Code session", () => {
  it("in tmux with an empty box: typed as the person's own prompt; with a dialog open or a draft in the box: a message, the dialog and the draft left alone", async () => {
    const { env, model, claude, sid, person, tmux, ran, status } = await idleSession(
      "ccmsg-typed",
      true,
    );
    expect(tmux).toMatch(/%\d+$/);
    try {
      expect(await person.call("message_send", { to: sid, text: "please run the tests" })).toEqual({
        delivered: true,
        typed: "confirmed",
      });
      const typed = await model.waitFor((r) => lastUserTexts(r).includes("please run the tests"));
      expect(typed.sid).toBe(sid);
      // A plain user turn: no peer framing anywhere in it.
      expect(lastUserTexts(typed).join("\n")).not.toContain("cross-session-message");
      expect(lastUserTexts(typed).join("\n")).not.toContain("Another Claude session");
      // Its receipt: seen by the route's own look at the transcript, never
      // judged lost for want of an envelope.
      const sent = await runCli(["sent", "--json"], env);
      expect(JSON.parse(sent.stdout).receipts).toContainEqual(
        expect.objectContaining({ to: sid, route: "typed", state: "seen" }),
      );

      // A permission dialog open: nothing is typed (Enter would answer it).
      claude.type("RUN IT");
      await until("the permission dialog", () =>
        status().waitingFor === "permission prompt" &&
        claude.pane().includes("Do you want to proceed?")
          ? true
          : undefined,
      );
      expect(await person.call("message_send", { to: sid, text: "are you there" })).toEqual({
        delivered: true,
      });
      expect(claude.pane()).toContain("Do you want to proceed?");
      expect(existsSync(ran)).toBe(false);
      claude.key("Escape");

      // Someone's unsent words in the box: never typed over.
      await until("the session idle, the box empty again", () => {
        const s = status();
        return s.status === "idle" &&
          s.waitingFor === undefined &&
          promptBox(claude.pane()) === "empty"
          ? true
          : undefined;
      });
      claude.draft("half a thought");
      await until("the draft in the box", () =>
        /❯\s+half a thought/.test(claude.pane()) ? true : undefined,
      );
      expect(await person.call("message_send", { to: sid, text: "and the lint" })).toEqual({
        delivered: true,
      });
      const framed = await model.waitFor((r) =>
        lastUserTexts(r).some((t) => t.includes("and the lint")),
      );
      expect(lastUserTexts(framed).join("\n")).toContain("cross-session-message");
      // (The box pads with a no-break space.)
      expect(claude.pane()).toMatch(/❯\s+half a thought/);
      expect(model.requests.some((r) => r.raw.includes("half a thought"))).toBe(false);
    } catch (error) {
      console.log(claude.pane());
      console.log(model.requests.map((r) => JSON.stringify(lastUserTexts(r)).slice(0, 300)));
      throw error;
    }
  }, 120_000);

  it("with no pane known: a message from the person, and `ccmsg post` says so", async () => {
    const { env, model, claude, sid } = await idleSession("ccmsg-untyped", false);
    try {
      const posted = await runCli(["post", sid, "the build is green", "--text"], env);
      expect(posted.stderr).toBe("");
      expect(posted.stdout).toBe(
        "delivered as a message: Claude Code shows it as from another session\n",
      );
      const framed = await model.waitFor((r) =>
        lastUserTexts(r).some((t) => t.includes("the build is green")),
      );
      expect(lastUserTexts(framed).join("\n")).toContain("cross-session-message");
      expect(lastUserTexts(framed)).not.toContain("the build is green");
    } catch (error) {
      console.log(claude.pane());
      throw error;
    }
  }, 120_000);
});
