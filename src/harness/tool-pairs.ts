import { type Json, obj, str } from "./claude/statusline-input.js";

// How a tool call pairs with its result (contract §10.4), the one place both
// readers of raw records learn it: the session fold (its pending calls) and
// the item classifiers (call and result items, linked over the file). Each
// keeps its own table — the fold only the calls still open, bounded and
// resumable; the item index every call, for links far back — and both apply
// the same rules:
//
// * Claude Code: `tool_use.id` ↔ `tool_result.tool_use_id`. Codex:
//   `call_id` ↔ the output's `call_id`; a local shell call written without
//   one is known by its `id`, as Codex itself pairs it. Ids are non-empty.
// * A result pairs only with a call made before it, and only the first does.
// * A call that spawns a sub-agent (`Agent`, formerly `Task`) is also the use
//   side of the sub-agent pair, its result the result side.
//
// Free of dependencies beyond the statusline's own readers: the statusline
// folds on every refresh and loads this.

/** The side of a pair an item is (contract §10.4). Both sides carry the same
 * `key`: `t:<tool_use_id>` for `tool:*`, `s:<tool_use_id>` for
 * `message:sub:*` (one Agent call is both pairs). */
export interface PairSide {
  key: string;
  side: "use" | "result";
}

export const toolKey = (toolUseId: string) => `t:${toolUseId}`;
export const subKey = (toolUseId: string) => `s:${toolUseId}`;

/** The call a pair key names, and whether it is the sub-agent pair. */
export function keyOf(key: string): { toolUseId: string; sub: boolean } {
  return { toolUseId: key.slice(2), sub: key.startsWith("s:") };
}

/** Whether a call of this tool spawns a sub-agent. */
export function spawnsAgent(name: string | undefined): boolean {
  return name === "Agent" || name === "Task";
}

/** A call: its pair id and, when the record names one, its tool. */
export interface ToolCall {
  toolUseId: string;
  name: string | undefined;
}

// --- Claude Code: content blocks of assistant and user records ---

/** A `tool_use` block as a call, with its input (`{}` when it has none). */
export function claudeCall(block: unknown): (ToolCall & { input: Json }) | undefined {
  const b = obj(block);
  const toolUseId = str(b?.id);
  if (b?.type !== "tool_use" || toolUseId === undefined) return undefined;
  return { toolUseId, name: str(b.name), input: obj(b.input) ?? {} };
}

/** A `tool_result` block as a result: which call it answers, and whether it
 * reports failure. */
export function claudeResult(block: unknown): { toolUseId: string; failed: boolean } | undefined {
  const b = obj(block);
  const toolUseId = str(b?.tool_use_id);
  if (b?.type !== "tool_result" || toolUseId === undefined) return undefined;
  return { toolUseId, failed: b.is_error === true };
}

// --- Codex: `response_item` payloads ---

const CODEX_CALLS = new Set(["function_call", "custom_tool_call", "local_shell_call"]);
const CODEX_RESULTS = new Set([
  "function_call_output",
  "custom_tool_call_output",
  "local_shell_call_output",
]);

/** The side a Codex payload is, if it is one; `toolUseId` is undefined when
 * the payload names no call (it cannot be paired). */
export type CodexSide =
  | { side: "use"; toolUseId: string | undefined; name: string | undefined }
  | { side: "result"; toolUseId: string | undefined };

export function codexSide(p: Json): CodexSide | undefined {
  const type = str(p.type) ?? "";
  if (CODEX_CALLS.has(type)) {
    const local = type === "local_shell_call";
    return {
      side: "use",
      toolUseId: str(p.call_id) ?? (local ? str(p.id) : undefined),
      name: local ? "local_shell" : str(p.name),
    };
  }
  if (CODEX_RESULTS.has(type)) return { side: "result", toolUseId: str(p.call_id) };
  return undefined;
}
