import type { OpName } from "../contract/attributes.js";
import { ContractError } from "../contract/errors.js";

// The instance names a bad argument by its JSON pointer (`/to: …`, the
// `invalid_args` convention of validate.ts). A person at the CLI or a model over MCP is told
// the argument in words instead ("the recipient: …"); the wire's message
// stays what it is.

/** Words for an argument, whatever the op. */
const ARGUMENT_WORDS: Record<string, string> = {
  to: "the recipient",
  sid: "the session",
  text: "the text",
  reply_to: "the message answered",
  ns: "the namespace",
  key: "the key",
  value: "the value",
  topic: "the topic",
  reason: "the reason",
  preset: "the preset",
  types: "the types",
  agent_id: "the agent",
  title: "the title",
};

/** Where an op's argument means something more particular. */
const OP_WORDS: Partial<Record<OpName, Record<string, string>>> = {
  hello: { sid: "the session this speaks as (--sid, or the harness's)" },
  notify_send: { sid: "the session the line is about" },
};

/** One `path: message` line of an `invalid_args` message. */
const POINTER_LINE = /^(\/(?:[A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)*)?): /;

/** `error` with each pointer of its `invalid_args` message put in words;
 * anything else unchanged. */
export function inWords(op: OpName, error: unknown): unknown {
  if (!(error instanceof ContractError) || error.code !== "invalid_args") return error;
  let changed = false;
  const lines = error.message.split("\n").map((line) => {
    const m = POINTER_LINE.exec(line);
    if (m === null) return line;
    changed = true;
    return `${pointerWords(op, m[1]!)}: ${line.slice(m[0].length)}`;
  });
  return changed ? new ContractError(error.code, lines.join("\n"), { cause: error }) : error;
}

/** `/to` → "the recipient"; `/types/2` → "the types (item 3)"; `/` → "the request". */
function pointerWords(op: OpName, pointer: string): string {
  const [name, ...rest] = pointer.split("/").slice(1);
  if (name === undefined || name === "") return "the request";
  const words = OP_WORDS[op]?.[name] ?? ARGUMENT_WORDS[name] ?? `the argument ${name}`;
  const where = rest.map((p) => (/^\d+$/.test(p) ? `item ${Number(p) + 1}` : p)).join(", ");
  return where === "" ? words : `${words} (${where})`;
}
