import {
  ATTENTION_INPUT_MAX_CHARS,
  type AttentionKind,
  type AttentionQuestion,
} from "../contract/attention.js";

// The harnesses' `PermissionRequest` hook (DR-0062), both ways: what a
// request asks, read from its payload (Claude Code and Codex send the same
// fields), and the answer that decides it. A hook that decides nothing
// answers `{}`: the harness's own dialog stays.

/** What a session asks a person, from a `PermissionRequest` payload. */
export interface PermissionAsk {
  sid: string;
  cwd?: string;
  kind: AttentionKind;
  tool: string;
  /** The tool's input as JSON for a person to read: secrets masked, bounded. */
  input: string;
  truncated: boolean;
  /** As the harness gave it: passed back unchanged with "always allow". */
  rawInput: Record<string, unknown>;
  suggestions?: unknown[];
  questions?: AttentionQuestion[];
  /** Only the terminal can answer it (DR-0062): Claude Code approves a plan
   * through the hook only with the plan's text in `updatedInput`, which its
   * payload does not carry (`tool_input` is `{}`). */
  terminalOnly?: true;
}

/** Tools whose dialog the hook cannot answer for the person. */
const TERMINAL_ONLY_TOOLS = new Set(["ExitPlanMode"]);

export function readPermissionRequest(payload: Record<string, unknown>): PermissionAsk | undefined {
  const { session_id: sid, tool_name: tool, tool_input: input } = payload;
  if (typeof sid !== "string" || typeof tool !== "string") return undefined;
  const rawInput = isRecord(input) ? input : {};
  const questions = tool === "AskUserQuestion" ? readQuestions(rawInput.questions) : undefined;
  const shown = shownInput(rawInput);
  return {
    sid,
    ...(typeof payload.cwd === "string" ? { cwd: payload.cwd } : {}),
    kind: questions === undefined ? "permission" : "question",
    tool,
    ...shown,
    rawInput,
    ...(Array.isArray(payload.permission_suggestions)
      ? { suggestions: payload.permission_suggestions }
      : {}),
    ...(questions === undefined ? {} : { questions }),
    ...(TERMINAL_ONLY_TOOLS.has(tool) ? { terminalOnly: true as const } : {}),
  };
}

function readQuestions(v: unknown): AttentionQuestion[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const out: AttentionQuestion[] = [];
  for (const q of v) {
    if (!isRecord(q) || typeof q.question !== "string" || !Array.isArray(q.options))
      return undefined;
    out.push({
      question: q.question,
      ...(typeof q.header === "string" ? { header: q.header } : {}),
      ...(typeof q.multiSelect === "boolean" ? { multi_select: q.multiSelect } : {}),
      options: q.options.filter(isRecord).map((o) => ({
        label: String(o.label ?? ""),
        ...(typeof o.description === "string" ? { description: o.description } : {}),
      })),
    });
  }
  return out;
}

/** What a person decided, in the harness's terms. */
export type PermissionDecision =
  | { behavior: "allow"; always?: boolean; answers?: Record<string, string> }
  | { behavior: "deny"; message?: string };

/** The hook's answer for `decision` (Claude Code's documented shape, which
 * Codex reads too). "Always" hands back the harness's own suggestions;
 * answers to a question go in as the tool's input plus `answers`. */
export function permissionAnswer(ask: PermissionAsk, decision: PermissionDecision): object {
  const d: Record<string, unknown> = { behavior: decision.behavior };
  if (decision.behavior === "deny") {
    if (decision.message !== undefined) d.message = decision.message;
  } else {
    if (decision.answers !== undefined)
      d.updatedInput = { ...ask.rawInput, answers: decision.answers };
    if (decision.always === true && ask.suggestions !== undefined)
      d.updatedPermissions = ask.suggestions;
  }
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: d } };
}

// --- what a person is shown of the input ---

const MASK = "•••";
/** Members whose value is a credential whatever it looks like. */
const SECRET_KEY =
  /pass(word|wd|phrase)|passwd|^pass$|secret|token|api[-_]?key|^auth$|authorization|credential|private[-_]?key|cookie/i;
/** Values that look like credentials wherever they appear: `NAME=value` and
 * `--name value` with a secret-looking name, bearer tokens, and the prefixes
 * of common providers' keys. */
const SECRET_TEXT: readonly [RegExp, string][] = [
  [
    /\b([A-Za-z0-9_]*(?:PASS(?:WORD|WD)?|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Za-z0-9_]*=)("[^"]*"|'[^']*'|\S+)/gi,
    `$1${MASK}`,
  ],
  [/(--?(?:password|passwd|token|secret|api-key|otp)[= ])("[^"]*"|'[^']*'|\S+)/gi, `$1${MASK}`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${MASK}`],
  [
    /\b(?:sk-[A-Za-z0-9_-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{16,})/g,
    MASK,
  ],
  [/(:\/\/[^/\s:@]+:)[^@\s/]+@/g, `$1${MASK}@`],
];

export function maskSecrets(text: string): string {
  let out = text;
  for (const [re, to] of SECRET_TEXT) out = out.replace(re, to);
  return out;
}

function masked(v: unknown, depth = 0): unknown {
  if (typeof v === "string") return maskSecrets(v);
  if (depth > 32 || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => masked(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    out[k] = SECRET_KEY.test(k) && typeof x !== "object" ? MASK : masked(x, depth + 1);
  return out;
}

function shownInput(input: Record<string, unknown>): { input: string; truncated: boolean } {
  const text = JSON.stringify(masked(input));
  const points = [...text];
  return points.length <= ATTENTION_INPUT_MAX_CHARS
    ? { input: text, truncated: false }
    : { input: points.slice(0, ATTENTION_INPUT_MAX_CHARS).join(""), truncated: true };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
