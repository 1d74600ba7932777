import { parseDirectDelivery } from "../../contract/direct-delivery.js";
import type { ClassifierState, TranscriptClassifier } from "../item-builder.js";
import {
  type CallBook,
  type Classified,
  deliveredFields,
  holdSend,
  ItemBuilder,
  instant,
  isObject,
  type Json,
  obj,
  type SendDraft,
  segment,
  sendAck,
  shellSend,
  str,
  textOf,
} from "../item-builder.js";
import { type CodexSide, codexSide, toolKey } from "../tool-pairs.js";
import type { TranscriptLine } from "../transcript-lines.js";

// A Codex rollout (`sessions/YYYY/MM/DD/rollout-*.jsonl`, harness.md §6.1) as
// typed items. Records are `{timestamp, type, payload}` and carry no uuid, so
// each is named by its byte offset (`@<offset>`, see ItemBuilder): a rollout
// is only appended to, so the name holds for as long as the file does.
//
// Codex writes most conversation twice: the model's view (`response_item`)
// and the UI's echo of it (`event_msg` user_message / agent_message /
// agent_reasoning). Items come from the model's view; the echoes, token
// counts and turn settings are bookkeeping.

/** `event_msg` kinds that echo a `response_item` or only keep books. */
const EVENT_BOOKKEEPING = new Set([
  "user_message",
  "agent_message",
  "agent_reasoning",
  "agent_reasoning_raw_content",
  "agent_reasoning_section_break",
  "token_count",
  "task_started",
  "task_complete",
  "turn_diff",
  "exec_command_begin",
  "exec_command_end",
  "patch_apply_begin",
  "patch_apply_end",
  "mcp_tool_call_begin",
  "mcp_tool_call_end",
  "web_search_begin",
  "web_search_end",
  "plan_update",
]);

/** Context Codex injects as a user message, by its opening tag. */
const INJECTED = /^<(environment_context|user_instructions)>/;

export class CodexClassifier implements TranscriptClassifier {
  parseErrors = 0;
  private turn = 0;
  private at = 0;
  private started = false;
  private sends = new Map<string, SendDraft>();

  constructor(private readonly calls: CallBook) {}

  save(): ClassifierState {
    const s: ClassifierState = { turn: this.turn, at: this.at, started: this.started };
    if (this.sends.size > 0) s.sends = [...this.sends];
    return s;
  }

  restore(s: ClassifierState): void {
    this.turn = s.turn;
    this.at = s.at;
    this.started = s.started === true;
    this.sends = new Map(s.sends);
  }

  classify(line: TranscriptLine): Classified[] {
    const r = line.record;
    if (r === undefined) {
      if (line.oversized || line.text.trim() !== "") this.parseErrors++;
      return [];
    }
    const payload = obj(r.payload);
    if (r.type === "turn_context") return [];
    if (r.type === "event_msg" && EVENT_BOOKKEEPING.has(str(payload?.type) ?? "")) return [];
    if (r.type === "session_meta" && !this.started) {
      this.started = true;
      return [];
    }
    this.at = instant(r.timestamp) ?? instant(payload?.timestamp) ?? this.at;
    const b = new ItemBuilder(line, undefined, this.at, () => this.turn);
    if (payload === undefined) {
      b.unknown(r);
      return b.out;
    }
    switch (r.type) {
      case "session_meta":
        // A later session_meta: the thread was resumed into this file.
        b.add("system:resume", { text: `resumed ${str(payload.id) ?? ""}`.trim() });
        break;
      case "response_item":
        this.responseItem(b, r, payload);
        break;
      case "event_msg":
        this.event(b, r, payload);
        break;
      case "compacted":
        b.add("system:compact", { text: str(payload.message) ?? "" });
        break;
      default:
        b.unknown(r);
    }
    return b.out;
  }

  private responseItem(b: ItemBuilder, r: Json, p: Json): void {
    const pair = codexSide(p);
    if (pair !== undefined) {
      this.toolSide(b, r, p, pair);
      return;
    }
    switch (p.type) {
      case "message": {
        const text = textOf(p.content) ?? "";
        if (p.role === "assistant") b.add("message:user:out", { text });
        else if (p.role === "user") this.userText(b, text);
        else b.add("system:caveat", { text });
        return;
      }
      case "reasoning": {
        const summary = Array.isArray(p.summary) ? textOf(p.summary) : undefined;
        b.add("thinking", { text: summary ?? textOf(p.content) ?? "" });
        return;
      }
      default:
        b.unknown(r);
    }
  }

  /** A call or its output: a `tool:` item, paired by call id. */
  private toolSide(b: ItemBuilder, r: Json, p: Json, pair: CodexSide): void {
    const callId = pair.toolUseId;
    if (pair.side === "use") {
      if (callId === undefined) {
        b.unknown(r);
        return;
      }
      const input =
        p.type === "function_call"
          ? jsonObject(p.arguments, "arguments")
          : p.type === "custom_tool_call"
            ? { input: p.input ?? null }
            : (obj(p.action) ?? {});
      b.add(
        `tool:${segment(pair.name ?? "")}`,
        { role: "use", tool_use_id: callId, input },
        { key: toolKey(callId), side: "use" },
      );
      holdSend(this.sends, callId, shellSend(shellCommand(input) ?? ""));
      return;
    }
    const tool = callId && this.calls.toolOf(callId, b.line.offset);
    if (callId === undefined || tool === undefined) {
      b.unknown(r);
      return;
    }
    const result = jsonObject(p.output, "output");
    const ran = shellRun(result);
    b.add(
      `tool:${tool}`,
      { role: "result", tool_use_id: callId, failure: ran.failure, result },
      { key: toolKey(callId), side: "result" },
    );
    // A ccmsg send is a message out once the command is known to have done
    // its work: exit 0, or (no exit code written) ccmsg's own answer.
    const send = this.sends.get(callId);
    this.sends.delete(callId);
    const ack = sendAck(ran.output);
    if (send !== undefined && (ran.exit === 0 || (ran.exit === undefined && ack !== undefined)))
      b.add("message:session:out", { ...send, ...ack });
  }

  private userText(b: ItemBuilder, text: string): void {
    const lead = text.trimStart();
    const injected = INJECTED.exec(lead);
    if (injected !== null) {
      b.add(`system:attachment:${injected[1]}`, { attachment: { text } });
      return;
    }
    if (lead.startsWith("<cross-session-message")) {
      const d = parseDirectDelivery(lead);
      if (d !== undefined) {
        b.add("message:session:in", deliveredFields(d));
        return;
      }
    }
    this.turn++;
    b.add("message:user:in", { text });
  }

  private event(b: ItemBuilder, r: Json, p: Json): void {
    switch (p.type) {
      case "turn_aborted":
        b.add("notice:interrupt", { text: str(p.reason) });
        return;
      case "error":
      case "stream_error":
        b.add("system:api-error", { text: str(p.message) ?? "" });
        return;
      default:
        b.unknown(r);
    }
  }
}

/** A JSON-object argument or output as an object: parsed when it is JSON
 * text of an object, else wrapped as `{[name]: value}`. */
function jsonObject(value: unknown, name: string): Json {
  if (isObject(value)) return value;
  if (typeof value === "string" && value.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (isObject(parsed)) return parsed;
    } catch {}
  }
  return { [name]: value ?? null };
}

/** What a Codex shell call's output says of the run: `{output, metadata:
 * {exit_code}}`, or the text form `Exit code: N … Output:\n…`. A refusal
 * (the person declined the command) is `denied`, another non-zero exit
 * `failed`. */
function shellRun(result: Json): {
  exit?: number;
  output?: string;
  failure?: "denied" | "failed";
} {
  const text = str(result.output);
  const meta = obj(result.metadata);
  let exit = typeof meta?.exit_code === "number" ? meta.exit_code : undefined;
  let output = text;
  if (exit === undefined && text !== undefined) {
    const m = /^Exit code: (-?\d+)$/m.exec(text);
    if (m !== null) exit = Number(m[1]);
    const at = text.indexOf("\nOutput:\n");
    if (at >= 0) output = text.slice(at + 9);
  }
  if (text !== undefined && /\b(rejected|declined|aborted) by (the )?user\b/i.test(text))
    return { exit, output, failure: "denied" };
  return { exit, output, ...(exit !== undefined && exit !== 0 ? { failure: "failed" } : {}) };
}

/** The script a Codex shell call runs (`["bash", "-lc", script]`). */
function shellCommand(input: Json): string | undefined {
  const command = input.command;
  if (typeof command === "string") return command;
  if (!Array.isArray(command)) return undefined;
  const last = command.at(-1);
  return typeof last === "string" ? last : undefined;
}
