import { resolve } from "node:path";
import {
  editConflicts,
  isOwn,
  type KeyedReservation,
  liveReservations,
} from "../contract/reservations.js";
import { type HookAnswer, payloadString } from "./hook-answers.js";
import { describe, uniqueByKey } from "./reservation-words.js";

// PreToolUse's answer (DR-0041) for both askers, the command hook and the
// http hook route (DR-0058): the edit's target and the reservations it runs
// into.

/** The tools whose input names a file they change (Claude Code). */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);

/** The file a PreToolUse payload's tool would change (absolute, against the
 * payload's `cwd`, else `cwd`), or undefined when the tool edits none. */
export function editTarget(payload: Record<string, unknown>, cwd: string): string | undefined {
  const tool = payloadString(payload, "tool_name");
  const input = payload.tool_input as Record<string, unknown> | undefined;
  if (tool === undefined || !EDIT_TOOLS.has(tool) || typeof input !== "object" || input === null)
    return undefined;
  const target = payloadString(input, "file_path") ?? payloadString(input, "notebook_path");
  return target === undefined ? undefined : resolve(payloadString(payload, "cwd") ?? cwd, target);
}

/** The reservations an edit of `path` (also reached as `real`, its symlinks
 * resolved: either may be the spelling a reservation used) by `sid` runs
 * into, exclusive first. */
export function conflictsOfEdit(
  entries: readonly { key: string; value?: unknown }[],
  sid: string | null,
  path: string,
  real: string,
  now: number,
): KeyedReservation[] {
  const list = liveReservations(entries, now);
  return uniqueByKey([
    ...editConflicts(list, sid, path),
    ...(real === path ? [] : editConflicts(list, sid, real)),
  ]).sort((a, b) => Number(b.exclusive) - Number(a.exclusive));
}

/** What the PreToolUse hook reads, from wherever its asker is. */
export interface EditChecks {
  /** The entries of KV namespace `reservations`. */
  entries(): Promise<readonly { key: string; value?: unknown }[]>;
  /** The path with its symlinks resolved as far as it exists. */
  real(path: string): Promise<string>;
  /** Whether the config says `reservations.on_conflict: "block"` (an
   * unreadable config: no, the default is to warn). */
  blocking(): Promise<boolean>;
}

/**
 * PreToolUse on Edit|Write|MultiEdit|NotebookEdit (DR-0041): an edit inside
 * another holder's exclusive reservation is denied with the reason (config
 * `reservations.on_conflict: "block"`) or let through with the reason in the
 * model's context ("warn", the default); inside a shared one it is only
 * pointed out.
 */
export async function editAnswer(
  checks: EditChecks,
  payload: Record<string, unknown>,
  sid: string | null,
  cwd: string,
  now: () => number,
): Promise<HookAnswer> {
  const path = editTarget(payload, cwd);
  if (path === undefined) return undefined;
  // Nobody else holding a reservation, the common case, is the whole answer:
  // no path is resolved and no config read (an http hook on every edit).
  const entries = await checks.entries();
  const at = now();
  if (!liveReservations(entries, at).some((r) => !isOwn(r, sid))) return undefined;
  // The config is read beside the path, not after it.
  const blocking = checks.blocking().catch(() => false);
  const real = await checks.real(path);
  const found = conflictsOfEdit(entries, sid, path, real, at);
  if (found.length === 0) return undefined;
  const exclusive = found.some((r) => r.exclusive);
  const lines = found.map((r) => `- ${describe(r, at)}`);
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
