import { Kind, type TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler, ValueErrorType } from "@sinclair/typebox/compiler";
import { decideViolations } from "./attention.js";
import { OP_NAMES, type OpName, opErrors } from "./attributes.js";
import { type HelloArgs, helloRoleViolations } from "./connect.js";
import { CONNECTION_EVENTS, FailureReply } from "./envelope.js";
import { CONNECTION_CODES, type ErrorCode } from "./errors.js";
import { kvWriteViolations } from "./kv.js";
import { markReadViolations } from "./notifications.js";
import { OP_SCHEMAS, TOPIC_SCHEMAS } from "./schemas.js";
import "./text.js";
import { TOPIC_KINDS, topicKind } from "./topics.js";
import { transcriptArgViolations } from "./transcripts.js";

// Compiled validators, and the helpers that turn a failure into the
// `invalid_args` message convention: one `path: message` per line.

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled validator of a schema, compiled once and cached. */
export function validator<T extends TSchema>(schema: T): TypeCheck<T> {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check as TypeCheck<T>;
}

export function isValid(schema: TSchema, value: unknown): boolean {
  return validator(schema).Check(value);
}

/** At most this many failures are listed: enough to fix a request, and a
 * bound on the work a hostile value can cause. */
const MAX_REPORTED = 10;

/** Schema failures as `path: message` lines; empty when the value is valid. */
export function validationErrors(schema: TSchema, value: unknown): string[] {
  const check = validator(schema);
  if (check.Check(value)) return [];
  const out: string[] = [];
  for (const e of check.Errors(value)) {
    out.push(`${e.path === "" ? "/" : e.path}: ${failureWords(e)}`);
    if (out.length >= MAX_REPORTED) break;
  }
  return out.length > 0 ? out : ["/: invalid"];
}

/** Longer values are cut in a message: enough to recognise the value. */
const QUOTED_CHARS = 40;

/**
 * What is wrong, in a person's words. A string of the wrong form is told what
 * the form is — the schema's `description` — never the regular expression
 * that checks it; text outside its length (a code-point string) is told its
 * limits. Other failures keep TypeBox's plain messages ("Expected string").
 */
function failureWords(e: {
  type: ValueErrorType;
  schema: TSchema;
  value: unknown;
  message: string;
}): string {
  const s = e.schema as TSchema & { minLength?: number; maxLength?: number; pattern?: string };
  const isText = s[Kind] === "CodePointString";
  if (typeof e.value !== "string" || (e.type !== ValueErrorType.StringPattern && !isText))
    return e.message;
  const form =
    s.description ??
    (isText ? lengthWords(s.minLength, s.maxLength, s.pattern !== undefined) : undefined) ??
    "not of the form this field takes";
  const shown = e.value.length > QUOTED_CHARS ? `${e.value.slice(0, QUOTED_CHARS - 1)}…` : e.value;
  return `${JSON.stringify(shown)} is not valid: ${form}`;
}

function lengthWords(min: number | undefined, max: number | undefined, shaped: boolean): string {
  const shape = shaped ? ", in the form this field takes" : "";
  if (min !== undefined && max !== undefined) return `text of ${min} to ${max} characters${shape}`;
  if (max !== undefined) return `text of at most ${max} characters${shape}`;
  if (min !== undefined) return `text of at least ${min} characters${shape}`;
  return `text${shape}`;
}

/**
 * Compile every schema of the contract now, so a schema that cannot compile
 * stops startup naming its op instead of failing the first request.
 */
export function compileContract(): void {
  const named: [string, TSchema][] = [["failure reply", FailureReply]];
  for (const op of OP_NAMES) {
    named.push(
      [`${op} request`, OP_SCHEMAS[op].request],
      [`${op} response`, OP_SCHEMAS[op].response],
    );
  }
  for (const kind of TOPIC_KINDS) named.push([`${kind} topic frame`, TOPIC_SCHEMAS[kind]]);
  for (const [ev, schema] of Object.entries(CONNECTION_EVENTS)) named.push([`${ev} event`, schema]);
  for (const [name, schema] of named) {
    try {
      validator(schema);
    } catch (cause) {
      throw new Error(`contract schema for ${name} failed to compile`, { cause });
    }
  }
}

/** Argument rules no schema can state, per op: the role rules of `hello`, the
 * size of a KV value, and the "at most one bound" rules of the transcript
 * reads. Checked at the same dispatch step as the schema, so they answer
 * `invalid_args` too. */
const ARG_RULES: Partial<Record<OpName, (args: never) => string[]>> = {
  hello: (args: HelloArgs) => helloRoleViolations(args),
  kv_write: kvWriteViolations,
  transcript_read: transcriptArgViolations,
  transcript_items_read: transcriptArgViolations,
  session_dump_write: transcriptArgViolations,
  notifications_mark_read: markReadViolations,
  attention_decide: decideViolations,
};

/** The rules beyond the schema, for a frame that already passed it. */
export function argRuleViolations(op: OpName, frame: unknown): string[] {
  const rules = ARG_RULES[op];
  return rules === undefined ? [] : rules(frame as never);
}

/** Everything wrong with a request for `op`: its schema, then its rules. */
export function requestErrors(op: OpName, frame: unknown): string[] {
  const errors = validationErrors(OP_SCHEMAS[op].request, frame);
  return errors.length === 0 ? argRuleViolations(op, frame) : errors;
}

/** Codes a reply to `op` may carry: its derived list plus the connection-level
 * codes; `topic_subscribe` also answers the topic table's refusals. */
export function replyCodes(op: OpName): ErrorCode[] {
  const codes: ErrorCode[] = [...opErrors(op), ...CONNECTION_CODES];
  if (op === "topic_subscribe") codes.push("forbidden", "capability_unavailable");
  return codes;
}

/** Everything wrong with a reply to `op`, success or failure. */
export function replyErrors(op: OpName, frame: unknown): string[] {
  const f = frame as { ok?: unknown; error?: { code?: unknown } };
  if (f?.ok !== false) return validationErrors(OP_SCHEMAS[op].response, frame);
  const errors = validationErrors(FailureReply, frame);
  if (errors.length > 0) return errors;
  const code = f.error?.code as ErrorCode;
  return replyCodes(op).includes(code) ? [] : [`/error/code: ${code} is not a code of ${op}`];
}

/** Everything wrong with a topic frame, judged by the kind of its name. */
export function topicFrameErrors(frame: unknown): string[] {
  const topic = (frame as { topic?: unknown })?.topic;
  const kind = typeof topic === "string" ? topicKind(topic) : undefined;
  if (kind === undefined) return [`/topic: not a topic of this generation`];
  return validationErrors(TOPIC_SCHEMAS[kind], frame);
}
