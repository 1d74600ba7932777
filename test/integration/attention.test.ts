import { describe, expect, it } from "vitest";
import type { AttentionItem } from "../../src/contract/attention.js";
import {
  isolatedHome,
  runCli,
  sharedInstance,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { newSid } from "../helpers/peer.js";
import { permissionPrompt, postHook } from "../helpers/permission-hook.js";
import { until } from "../helpers/real-claude.js";

// The attention queue through the instance (DR-0062): a PermissionRequest
// posted to the hook route as Claude Code posts it is held there, listed by
// `ccmsg attention`, and answered with what the person decides there; a
// second decision is refused; a hook that gives up ends its item.

const shared = sharedInstance();
/** The real 2.1.328 payload of a Bash prompt, for session `sid`. */
const bashPrompt = (sid: string) => permissionPrompt("bash", sid);

/** POST to the hook route as Claude Code does; resolves with its answer. */
async function hook(
  inst: TestInstance,
  payload: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<unknown> {
  const { status, body } = await postHook(inst.http, inst.stateDir, payload, signal);
  expect(status).toBe(200);
  return body;
}

async function list(env: NodeJS.ProcessEnv, all = false): Promise<AttentionItem[]> {
  const r = await runCli(["attention", ...(all ? ["--all"] : []), "--json"], env);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { items: AttentionItem[] }).items;
}

/** Until session `sid` has a pending item; it. */
function pendingOf(env: NodeJS.ProcessEnv, sid: string): Promise<AttentionItem> {
  return until("the item", async () => (await list(env)).find((i) => i.sid === sid));
}

describe("the attention queue (DR-0062)", () => {
  it("holds a permission hook until the person allows it with ccmsg attention", async () => {
    const sid = newSid();
    const answer = hook(shared.inst, bashPrompt(sid));
    const item = await pendingOf(shared.env, sid);
    expect(item).toMatchObject({ tool: "Bash", kind: "permission", harness: "claude" });
    expect(JSON.parse(item.input)).toMatchObject({ description: "write a file" });

    const r = await runCli(["attention", "allow", String(item.id), "--json"], shared.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "decided", item: { end: "allowed" } });
    expect(await answer).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    expect((await list(shared.env)).some((i) => i.sid === sid)).toBe(false);

    // Too late: refused with what won, and kept beside it.
    const late = await runCli(["attention", "deny", String(item.id), "--json"], shared.env);
    expect(late.code).toBe(1);
    expect(JSON.parse(late.stdout)).toMatchObject({
      outcome: "refused",
      reason: "already allowed from the cli",
    });
    const kept = (await list(shared.env, true)).find((i) => i.id === item.id)!;
    expect(kept.refused).toHaveLength(1);
  });

  it("gives the model the person's deny message", async () => {
    const sid = newSid();
    const answer = hook(shared.inst, bashPrompt(sid));
    const item = await pendingOf(shared.env, sid);
    const r = await runCli(
      ["attention", "deny", String(item.id), "--message", "use the staging bucket"],
      shared.env,
    );
    expect(r.code).toBe(0);
    expect(await answer).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "use the staging bucket" },
      },
    });
  });

  it("ends an item whose hook Claude Code gave up on", async () => {
    const sid = newSid();
    const giveUp = new AbortController();
    const answer = hook(shared.inst, bashPrompt(sid), giveUp.signal).catch(() => "aborted");
    const item = await pendingOf(shared.env, sid);
    giveUp.abort();
    expect(await answer).toBe("aborted");
    await until("its end", async () =>
      (await list(shared.env, true)).find((i) => i.id === item.id && i.end === "hook_gone"),
    );
  });

  it("answers nothing once the hold runs out (the dialog stays in the terminal)", async () => {
    const home = isolatedHome();
    const inst = await startInstance({
      env: { ...home.env, CCMSG_TEST_ATTENTION_HOLD_MS: "300" },
    });
    try {
      const sid = newSid();
      expect(await hook(inst, bashPrompt(sid))).toEqual({});
      const [item] = (await list(inst.env, true)).filter((i) => i.sid === sid);
      expect(item?.end).toBe("timed_out");
    } finally {
      await inst.stop();
    }
  });

  it("is the person's: a session may not list or decide", async () => {
    const r = await runCli(["attention", "--sid", newSid()], shared.env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("forbidden");
  });
});
