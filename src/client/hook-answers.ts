import { resolve } from "node:path";
import type { KvEntry } from "../contract/kv.js";
import { editConflicts, liveReservations } from "../contract/reservations.js";
import { ADDITIONAL_CONTEXT_MAX_CHARS, fitMessages } from "../harness/hook-delivery.js";
import { configFile } from "../state/paths.js";
import { connectInstance, greet } from "./connect.js";
import type { Flags } from "./flags.js";
import { claimHeld, confirmPassedOn, splitShown } from "./hand-over.js";
import { hookSid, payloadString } from "./hook-payload.js";
import { describe, openReservations, realAsFarAsExists, uniqueByKey } from "./reservations.js";
import { ShownLedger } from "./shown-ledger.js";

// What the hot hooks answer, from a hook's JSON payload: the same code for the
// command hooks (`inbox --hook`, `reservations check --hook`, one process per
// call) and the instance's http hook route (DR-0058), which asks its own
// socket with it — one place for the claim/confirm and shown-ledger rules.

/** A hook's JSON answer (its stdout, or an http hook's body); undefined = none. */
export type HookAnswer = Record<string, unknown> | undefined;

/**
 * UserPromptSubmit (and Codex's Stop): the held messages that fit the
 * harness's 10,000-character context, oldest first, with a note about the
 * rest (which stay held) — as `additionalContext`, or at Stop as a
 * `decision: "block"` whose reason the model reads and carries on with.
 * Claimed, then confirmed before the answer is given (DR-0024, DR-0050);
 * `confirming` is called just before, after which the answer must be given.
 * Throws when the instance is away or refuses.
 */
export async function promptHookAnswer(
  flags: Flags,
  payload: Record<string, unknown>,
  confirming: () => boolean = () => true,
): Promise<HookAnswer> {
  const sid = hookSid(flags, payload);
  if (sid === undefined) return undefined;
  const client = await connectInstance(flags, { start: false });
  try {
    await greet(client, sid, {});
    const ledger = ShownLedger.of(flags, sid);
    const { fresh, shown } = splitShown(await claimHeld(client), ledger);
    if (fresh.length === 0) {
      if (shown.length > 0) await confirmPassedOn(client, fresh, shown, ledger);
      return undefined;
    }
    const { text, included } = fitMessages(fresh, ADDITIONAL_CONTEXT_MAX_CHARS);
    const event = payloadString(payload, "hook_event_name") ?? "UserPromptSubmit";
    // At Stop the messages keep the turn going (Codex, which cannot be woken
    // later); elsewhere they join the prompt's context.
    const out =
      event === "Stop"
        ? { decision: "block", reason: text }
        : { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
    // Past its deadline the caller answers nothing: the claims go with the
    // connection and the messages stay held.
    if (!confirming()) return undefined;
    if ((await confirmPassedOn(client, included, shown, ledger)) === "refused") return undefined;
    return out;
  } finally {
    client.close();
  }
}

/** The tools whose input names a file they change (Claude Code). */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);

/**
 * PreToolUse on Edit|Write|MultiEdit|NotebookEdit (DR-0041): an edit inside
 * another holder's exclusive reservation is denied with the reason (config
 * `reservations.on_conflict: "block"`) or let through with the reason in the
 * model's context ("warn", the default); inside a shared one it is only
 * pointed out. Throws when the instance is away (the caller allows).
 */
export async function editHookAnswer(
  flags: Flags,
  payload: Record<string, unknown>,
  cwd: string,
): Promise<HookAnswer> {
  const tool = payloadString(payload, "tool_name");
  const input = payload.tool_input as Record<string, unknown> | undefined;
  if (tool === undefined || !EDIT_TOOLS.has(tool) || typeof input !== "object" || input === null)
    return undefined;
  const target = payloadString(input, "file_path") ?? payloadString(input, "notebook_path");
  if (target === undefined) return undefined;
  const path = resolve(payloadString(payload, "cwd") ?? cwd, target);
  const sid = hookSid(flags, payload) ?? null;
  // The config's checker loads beside the round trip, not before it; a
  // config that cannot be read leaves the default (warn).
  const blocking = import("../config/config.js")
    .then((m) => m.loadConfig(configFile(undefined)).reservations?.on_conflict === "block")
    .catch(() => false);
  const { client, live } = await openReservations(flags, false);
  client.close();
  const now = Date.now();
  const found = conflictsOfEdit(live, sid, path, now);
  if (found.length === 0) return undefined;
  const exclusive = found.some((r) => r.exclusive);
  const lines = found.map((r) => `- ${describe(r, now)}`);
  return exclusive && (await blocking)
    ? {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: [
            `ccmsg: ${path} is reserved by another agent, so this edit was blocked:`,
            ...lines,
            "Edit something else, or ask the holder (ccmsg post <sid> …) to release it.",
          ].join("\n"),
        },
      }
    : {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          additionalContext: [
            exclusive
              ? `ccmsg warning: ${path} is reserved by another agent; your edit may collide with theirs:`
              : `ccmsg note: ${path} is also reserved (shared) by another agent:`,
            ...lines,
          ].join("\n"),
        },
      };
}

/** The reservations an edit of `path` by `sid` runs into, exclusive first. */
export function conflictsOfEdit(live: KvEntry[], sid: string | null, path: string, now: number) {
  const list = liveReservations(live, now);
  // The path as given and with its symlinks resolved: either may be the
  // spelling a reservation used.
  const real = realAsFarAsExists(path);
  return uniqueByKey([
    ...editConflicts(list, sid, path),
    ...(real === path ? [] : editConflicts(list, sid, real)),
  ]).sort((a, b) => Number(b.exclusive) - Number(a.exclusive));
}
