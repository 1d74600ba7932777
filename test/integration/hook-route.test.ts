import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deliveriesIn } from "../../src/harness/item-builder.js";
import { inboxRows } from "../helpers/db.js";
import {
  isolatedHome,
  ROOT,
  runCli,
  sharedInstance,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { postHook } from "../helpers/permission-hook.js";
import { until } from "../helpers/real-claude.js";

// The instance's http hook route (DR-0058), asked as Claude Code asks it:
// answered in-process with the command hooks' rules — a held message goes to
// one hook only, whichever way each hook asks; a reservation refuses an edit
// through it as through `reservations check --hook`; and the installed
// plugin's hooks follow the instance to another port.

const shared = sharedInstance();
const BIN = join(ROOT, "node_modules", ".bin");

/** POST a hook payload to the route with the hook token; the JSON answer. */
async function routeHook(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { status, body } = await postHook(shared.inst.http, shared.inst.stateDir, payload);
  expect(status).toBe(200);
  return body as Record<string, unknown>;
}

/** The message texts an UserPromptSubmit answer carries. */
function textsOf(out: unknown): string[] {
  const context = (out as { hookSpecificOutput?: { additionalContext?: string } } | undefined)
    ?.hookSpecificOutput?.additionalContext;
  return context === undefined ? [] : deliveriesIn(context).map((d) => d.text);
}

describe("the http hook route, in-process", () => {
  it("hands a held message to exactly one of a route hook and a command hook racing", async () => {
    const sender = await Peer.unix(shared.inst.socket);
    await sender.helloSession(newSid());
    for (let round = 0; round < 3; round++) {
      const sid = newSid();
      const recipient = await Peer.unix(shared.inst.socket);
      await recipient.helloSession(sid);
      const sent = ["one", "two", "three", "four"].map((w) => `${w} of round ${round}`);
      for (const text of sent)
        expect(await sender.call("message_send", { to: sid, text })).toMatchObject({
          delivered: false,
        });
      const payload = { session_id: sid, hook_event_name: "UserPromptSubmit", prompt: "go" };
      const [viaRoute, viaCommand] = await Promise.all([
        routeHook(payload),
        runCli(["inbox", "--hook"], shared.env, JSON.stringify(payload)),
      ]);
      expect(viaCommand.code).toBe(0);
      const got = [
        ...textsOf(viaRoute),
        ...textsOf(viaCommand.stdout === "" ? undefined : JSON.parse(viaCommand.stdout)),
      ];
      // Each once, by one hook or the other, and recorded delivered.
      expect([...got].sort()).toEqual([...sent].sort());
      expect(
        inboxRows(shared.inst.stateDir)
          .filter((r) => r.sid === sid)
          .map((r) => r.state),
      ).toEqual(["delivered", "delivered", "delivered", "delivered"]);
      // Nothing is left for the next prompt.
      expect(await routeHook(payload)).toEqual({});
      recipient.close();
    }
    sender.close();
  });

  it("denies an edit inside another session's exclusive reservation when configured to block", async () => {
    const A = newSid();
    const B = newSid();
    const dir = mkdtempSync(join(shared.inst.env.HOME!, "proj-"));
    mkdirSync(join(dir, "src"));
    const reserved = await runCli(
      ["reserve", "src/**", "--for", "30m", "--reason", "schema work"],
      { ...shared.env, CLAUDE_CODE_SESSION_ID: A },
      undefined,
      { cwd: dir },
    );
    expect(reserved.code, reserved.stderr).toBe(0);
    const edit = (sid: string) => ({
      session_id: sid,
      hook_event_name: "PreToolUse",
      cwd: dir,
      tool_name: "Write",
      tool_input: { file_path: "src/new.ts", content: "x" },
    });
    const configDir = join(shared.env.XDG_CONFIG_HOME!, "ccmsg");
    mkdirSync(configDir, { recursive: true });
    const setConfig = (value: object) =>
      writeFileSync(join(configDir, "config.json"), JSON.stringify(value));
    try {
      // The default warns; the config is read per hook, no restart.
      setConfig({});
      const warned = (await routeHook(edit(B))).hookSpecificOutput as Record<string, string>;
      expect(warned.permissionDecision).toBeUndefined();
      expect(warned.additionalContext).toContain(`session ${A}`);
      setConfig({ reservations: { on_conflict: "block" } });
      const denied = (await routeHook(edit(B))).hookSpecificOutput as Record<string, string>;
      expect(denied).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
      expect(denied.permissionDecisionReason).toContain(`session ${A}`);
      expect(denied.permissionDecisionReason).toContain("schema work");
      // The holder edits freely; a tool that writes nothing is not looked at.
      expect(await routeHook(edit(A))).toEqual({});
      expect(await routeHook({ ...edit(B), tool_name: "Read" })).toEqual({});
    } finally {
      setConfig({});
    }
  });
});

describe("the plugin's http hooks follow the instance's port", () => {
  const started: TestInstance[] = [];
  afterAll(async () => {
    for (const inst of started) await inst.stop().catch(() => {});
  });

  it("an instance that binds another port rewrites the installed hooks.json, and uninstall still removes it", async () => {
    const { env } = isolatedHome();
    const first = await startInstance({ env });
    started.push(first);
    const cli = { ...env, PATH: `${BIN}:${process.env.PATH}`, CCMSG_STATE_DIR: first.stateDir };
    const installed = await runCli(["plugin", "install", "claude", "--json"], cli);
    expect(installed.code, installed.stderr).toBe(0);
    const file = join(first.stateDir, "plugins", "claude", "hooks", "hooks.json");
    const urls = () =>
      [...readFileSync(file, "utf8").matchAll(/"url": "([^"]+)"/g)].map((m) => m[1]);
    // UserPromptSubmit, PreToolUse and PermissionRequest.
    expect(urls()).toEqual(Array(3).fill(new URL("/hooks/claude", first.http).href));
    await first.stop();

    // The same state directory on another (ephemeral) port.
    const second = await startInstance({ env, stateDir: first.stateDir });
    started.push(second);
    expect(second.http).not.toBe(first.http);
    const moved = new URL("/hooks/claude", second.http).href;
    await until("hooks.json names the new port", () =>
      urls().every((u) => u === moved) ? true : undefined,
    );
    expect(readFileSync(file, "utf8")).toContain("'hello' '--hook'");

    // The receipt knows the rewritten file as the install's own.
    const removed = await runCli(["plugin", "uninstall", "claude", "--json"], cli);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 60_000);
});
