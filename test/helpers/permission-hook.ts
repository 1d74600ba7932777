import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AttentionItem } from "../../src/contract/attention.js";
import { loadOrMintHookToken } from "../../src/state/hook-token.js";
import { startInstance, type TestInstance } from "./instance.js";
import { until } from "./real-claude.js";

// A PermissionRequest as Claude Code 2.1.328 sends it to the instance's hook
// route (DR-0058, DR-0062): the recorded payload, for another session, posted
// with the hook token. The reply is what Claude Code would act on.

const HOOKS = join(import.meta.dirname, "..", "fixtures", "claude-code", "hooks");

/** The recorded hook payload `file`, for session `sid`, `extra` over it. */
export function hookPayload(
  file: string,
  sid: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const p = JSON.parse(readFileSync(join(HOOKS, file), "utf8"));
  return { ...p, session_id: sid, ...extra };
}

/** The recorded payload `permission-request-<name>.json`, for session `sid`. */
export function permissionPrompt(name: "bash" | "question", sid: string): Record<string, unknown> {
  return hookPayload(`permission-request-${name}.json`, sid);
}

/** POST `payload` to the hook route of the instance at `http` (state dir
 * `stateDir`); resolves with its status and JSON answer once it answers. */
export async function postHook(
  http: string,
  stateDir: string,
  payload: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL("/hooks/claude", http), {
    method: "POST",
    headers: {
      authorization: `Bearer ${loadOrMintHookToken(stateDir)}`,
      "content-type": "application/json",
    },
    body: JSON.stringify(payload),
    ...(signal === undefined ? {} : { signal }),
  });
  return { status: res.status, body: await res.json() };
}

/** An instance whose attention queue holds a hook `holdMs` (its test hook),
 * for a scripted session in tmux: its prompts are typed into the pane, so
 * the person would count as at the terminal and every hook would leave the
 * dialog at once; the at-the-terminal window is off. */
export function startHoldingInstance(
  home: { env: Record<string, string> },
  holdMs: number,
): Promise<TestInstance> {
  return startInstance({
    env: {
      ...home.env,
      CCMSG_TEST_ATTENTION_HOLD_MS: String(holdMs),
      CCMSG_TEST_ATTENTION_AT_TERMINAL_MS: "0",
    },
  });
}

/** The real-harness attention tests' case `name` (its command writes
 * `<name>.ran`): its item in `queue` once the hook asked, and (`ended`) once
 * it ended. */
export function caseItem(
  queue: () => Promise<AttentionItem[]>,
  name: string,
  ended: boolean,
  timeoutMs: number,
): Promise<AttentionItem> {
  return until(
    `case ${name}'s item${ended ? " to end" : ""}`,
    async () =>
      (await queue()).find(
        (i) => i.input.includes(`${name}.ran`) && (!ended || i.end !== undefined),
      ),
    timeoutMs,
  );
}
