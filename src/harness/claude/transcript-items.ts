import type { ClassifierState, Subject, TranscriptClassifier } from "../item-builder.js";
import {
  type CallBook,
  type Classified,
  count,
  deliveredFields,
  deliveriesIn,
  flag,
  holdSend,
  ItemBuilder,
  id,
  instant,
  isObject,
  type Json,
  lineCount,
  mcpSend,
  obj,
  type SendDraft,
  segment,
  sendAck,
  shellSend,
  str,
  tagBody,
  textOf,
} from "../item-builder.js";
import { claudeCall, claudeResult, spawnsAgent, subKey, toolKey } from "../tool-pairs.js";
import type { TranscriptLine } from "../transcript-lines.js";
import { peerMessage } from "./peer-message.js";

// Claude Code's JSONL (harness.md §6.2) as typed items (contract §10). One
// record can give several items (an assistant message's thinking, text and
// each tool call); UI bookkeeping gives none; anything else that cannot be
// placed is kept as `system:unknown`.

/** Record types that are the UI's bookkeeping, never part of the
 * conversation. `summary` is the title the resume list shows. */
const BOOKKEEPING = new Set([
  "mode",
  "permission-mode",
  "queue-operation",
  "progress",
  "file-history-snapshot",
  "ai-title",
  "custom-title",
  "last-prompt",
  "summary",
  "tag",
  "agent-name",
  // The harness's own record of each API request (2.1.3xx): what it sent,
  // deduplicated by hash, and which tools a turn used.
  "api-request",
  "api-request-shape",
  "api-request-blob",
  "atis-latch",
  "tools-used",
  // What the session has cost so far (2.1.328), for the harness's own display.
  "cost-state",
]);

/** `system` subtypes that are bookkeeping too. */
const SYSTEM_BOOKKEEPING = new Set(["turn_duration"]);

/** Attachment kinds that report a hook run, and the outcome each stands for. */
const HOOK_OUTCOMES: Record<string, "additionalContext" | "output" | "block"> = {
  hook_additional_context: "additionalContext",
  hook_blocking_error: "block",
  hook_stopped_continuation: "block",
};

const INTERRUPT = "[Request interrupted by user";

/** How Claude Code introduces a hook's blocking stderr inside a notification. */
const HOOK_FEEDBACK = /hook blocking error from command "[^"\n]*": /;

export class ClaudeClassifier implements TranscriptClassifier {
  parseErrors = 0;
  private turn = 0;
  private at = 0;
  /** The API message being streamed (one `message.id` may be written as
   * several records) and the blocks of it already turned into items. */
  private message: string | undefined;
  private seen = new Set<string>();
  private slash: string | undefined;
  private sends = new Map<string, SendDraft>();

  constructor(
    private readonly calls: CallBook,
    // The subject changes no rule today: for an agent, the brief its parent
    // handed it is the first user record of its own file, `message:user:in`.
    _subject: Subject,
  ) {}

  save(): ClassifierState {
    const s: ClassifierState = { turn: this.turn, at: this.at };
    if (this.message !== undefined) {
      s.message = this.message;
      s.seen = [...this.seen];
    }
    if (this.slash !== undefined) s.slash = this.slash;
    if (this.sends.size > 0) s.sends = [...this.sends];
    return s;
  }

  restore(s: ClassifierState): void {
    this.turn = s.turn;
    this.at = s.at;
    this.message = s.message;
    this.seen = new Set(s.seen);
    this.slash = s.slash;
    this.sends = new Map(s.sends);
  }

  classify(line: TranscriptLine): Classified[] {
    const r = line.record;
    if (r === undefined) {
      if (line.oversized || line.text.trim() !== "") this.parseErrors++;
      return [];
    }
    const type = r.type;
    if (typeof type === "string" && BOOKKEEPING.has(type)) return [];
    this.at = instant(r.timestamp) ?? this.at;
    const b = new ItemBuilder(line, r.uuid, this.at, () => this.turn);
    switch (type) {
      case "user":
        this.user(b, r);
        break;
      case "assistant":
        this.assistant(b, r);
        break;
      case "system":
        this.system(b, r);
        break;
      case "attachment":
        this.attachment(b, r);
        break;
      default:
        b.unknown(r);
    }
    return b.out;
  }

  // --- user records: prompts, tool results, and what the harness injects ---

  private user(b: ItemBuilder, r: Json): void {
    const content = obj(r.message)?.content;
    const meta = r.isMeta === true;
    const peer = fromPeer(r);
    if (r.isCompactSummary === true) {
      b.add("system:compact", { text: textOf(content) ?? "" });
      return;
    }
    if (typeof content === "string") {
      this.userText(b, content, meta, peer);
      return;
    }
    if (!Array.isArray(content)) {
      b.unknown(r);
      return;
    }
    const results = content.filter((c) => isObject(c) && c.type === "tool_result");
    const extra = results.length === 1 ? obj(r.toolUseResult) : undefined;
    for (const block of results) this.toolResult(b, r, block as Json, extra);
    const texts: string[] = [];
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
      else if (block.type === "image" || block.type === "document") texts.push(`[${block.type}]`);
      else if (block.type !== "tool_result") b.unknown(r);
    }
    if (texts.length > 0) this.userText(b, texts.join("\n"), meta, peer);
    if (b.out.length === 0) b.unknown(r);
  }

  /** A user text: a person's prompt, or one of the harness's wrappers.
   * `peer`: the harness marked it as another session's. */
  private userText(b: ItemBuilder, text: string, meta: boolean, peer = false): void {
    const lead = text.trimStart();
    const message = peerMessage(lead, peer);
    if (message !== undefined) {
      b.add("message:session:in", { ...message });
      return;
    }
    if (lead.startsWith("<task-notification>")) {
      const summary = tagBody(lead, "summary") ?? tagBody(lead, "result");
      b.add("system:task", {
        text: (summary ?? lead).trim(),
        task_id: id(tagBody(lead, "task-id")?.trim()),
        event: id(tagBody(lead, "status")?.trim()),
      });
      // An asyncRewake hook's stderr (the waiter's wake-up) arrives as such a
      // notification: `… hook blocking error from command "…": <envelope>`.
      const feedback = HOOK_FEEDBACK.exec(lead);
      if (feedback !== null)
        for (const d of deliveriesIn(lead.slice(feedback.index + feedback[0].length)))
          b.add("message:session:in", deliveredFields(d));
      return;
    }
    if (this.command(b, lead)) return;
    if (lead.startsWith(INTERRUPT)) {
      b.add("notice:interrupt", { text });
      return;
    }
    if (meta) {
      b.add("system:caveat", { text: tagBody(text, "local-command-caveat") ?? text });
      return;
    }
    this.turn++;
    b.add("message:user:in", { text });
  }

  /** Slash commands, their output, and a person's `!` shell commands, as
   * `notice:slash`; true when the text was one. */
  private command(b: ItemBuilder, text: string): boolean {
    const name = tagBody(text, "command-name")?.trim();
    if (name) {
      this.slash = name;
      this.turn++;
      b.add("notice:slash", {
        command: name,
        args: tagBody(text, "command-args")?.trim() || undefined,
      });
      return true;
    }
    const stdout = tagBody(text, "local-command-stdout") ?? tagBody(text, "local-command-stderr");
    if (stdout !== undefined) {
      b.add("notice:slash", { command: this.slash ?? "local-command", stdout });
      return true;
    }
    const shell = tagBody(text, "bash-input");
    if (shell !== undefined) {
      this.turn++;
      b.add("notice:slash", { command: "!", args: shell });
      return true;
    }
    const out = tagBody(text, "bash-stdout");
    if (out !== undefined) {
      const err = tagBody(text, "bash-stderr");
      b.add("notice:slash", { command: "!", stdout: err ? `${out}${out ? "\n" : ""}${err}` : out });
      return true;
    }
    return false;
  }

  // --- assistant records: text, thinking, tool calls ---

  private assistant(b: ItemBuilder, r: Json): void {
    const message = obj(r.message);
    const content = message?.content;
    const apiError = r.isApiErrorMessage === true;
    if (typeof content === "string") {
      b.add(apiError ? "system:api-error" : "message:user:out", { text: content });
      return;
    }
    if (!Array.isArray(content)) {
      b.unknown(r);
      return;
    }
    const messageId = str(message?.id);
    if (messageId === undefined || messageId !== this.message) {
      this.message = messageId;
      this.seen = new Set();
    }
    for (const block of content) {
      if (!isObject(block)) continue;
      // A block already written by an earlier record of the same API
      // message must not become a second item.
      const key = blockKey(block);
      if (key !== undefined && messageId !== undefined) {
        if (this.seen.has(key)) continue;
        this.seen.add(key);
      }
      switch (block.type) {
        case "text":
          b.add(apiError ? "system:api-error" : "message:user:out", {
            text: str(block.text) ?? "",
          });
          break;
        case "thinking":
          b.add("thinking", { text: str(block.thinking) ?? "" });
          break;
        case "redacted_thinking":
          b.add("thinking", { text: "" });
          break;
        case "tool_use":
          this.toolUse(b, r, block);
          break;
        default:
          b.unknown(r);
      }
    }
  }

  private toolUse(b: ItemBuilder, r: Json, block: Json): void {
    const call = claudeCall(block);
    if (call === undefined) {
      b.unknown(r);
      return;
    }
    const { toolUseId, input } = call;
    const name = spawnsAgent(call.name) ? "Agent" : segment(call.name ?? "");
    const fields = useFields(name, input);
    if (fields === undefined) {
      b.unknown(r);
      return;
    }
    const pair = { key: toolKey(toolUseId), side: "use" } as const;
    b.add(`tool:${name}`, { role: "use", tool_use_id: toolUseId, ...fields }, pair);
    if (spawnsAgent(name)) {
      b.add(
        "message:sub:out",
        {
          role: "use",
          prompt: fields.prompt,
          subagent_type: fields.subagent_type,
          name: fields.name,
          description: fields.description,
        },
        { key: subKey(toolUseId), side: "use" },
      );
    }
    holdSend(
      this.sends,
      toolUseId,
      name === "Bash"
        ? shellSend(String(fields.command))
        : name.startsWith("mcp__")
          ? mcpSend(name, input)
          : undefined,
    );
  }

  private toolResult(b: ItemBuilder, r: Json, block: Json, extra: Json | undefined): void {
    const result = claudeResult(block);
    const tool = result && this.calls.toolOf(result.toolUseId, b.line.offset);
    if (result === undefined || tool === undefined) {
      b.unknown(r);
      return;
    }
    const { toolUseId, failed } = result;
    const text = textOf(block.content);
    const fields = resultFields(tool, extra, text, failed, block);
    const failure = failed ? (refused(r.toolUseResult, text) ? "denied" : "failed") : undefined;
    b.add(
      `tool:${tool}`,
      { role: "result", tool_use_id: toolUseId, failure, ...fields },
      { key: toolKey(toolUseId), side: "result" },
    );
    if (spawnsAgent(tool)) {
      b.add(
        "message:sub:in",
        {
          role: "result",
          text: text ?? "",
          agent_id: id(extra?.agentId),
          status: str(extra?.status) ?? (failed ? "error" : undefined),
          duration_ms: count(extra?.totalDurationMs),
        },
        { key: subKey(toolUseId), side: "result" },
      );
    }
    // A ccmsg send is a message out once its call came back done: a call the
    // person denied, that failed or was interrupted carried nothing.
    const send = this.sends.get(toolUseId);
    this.sends.delete(toolUseId);
    if (send !== undefined && !failed && fields.interrupted !== true) {
      // ccmsg's answer: the shell's stdout, or the MCP tool's JSON text.
      const ack = sendAck(tool === "Bash" ? str(fields.stdout) : text);
      b.add("message:session:out", { ...send, ...ack });
    }
  }

  // --- system records and attachments ---

  private system(b: ItemBuilder, r: Json): void {
    const subtype = str(r.subtype) ?? "";
    const content = str(r.content);
    if (SYSTEM_BOOKKEEPING.has(subtype)) return;
    switch (subtype) {
      case "compact_boundary":
      case "microcompact_boundary":
        b.add("system:compact", { text: content ?? "Conversation compacted" });
        return;
      case "api_error":
        b.add("system:api-error", { text: content ?? errorText(r.error) });
        return;
      case "local_command":
        if (content !== undefined && this.command(b, content)) return;
        break;
      case "stop_hook_summary": {
        const event = segment(str(r.hookEvent) ?? "Stop");
        const info = Array.isArray(r.hookInfos) ? obj(r.hookInfos[0]) : undefined;
        b.add(`hook:${event}`, {
          hook_name: event,
          outcome: r.preventedContinuation === true ? "block" : "output",
          content: str(r.stopReason) || undefined,
          command: str(info?.command),
        });
        return;
      }
      case "informational":
        if (content !== undefined) {
          b.add("system:caveat", { text: content });
          return;
        }
        break;
    }
    b.unknown(r);
  }

  private attachment(b: ItemBuilder, r: Json): void {
    const a = obj(r.attachment);
    const kind = str(a?.type);
    if (a === undefined || kind === undefined) {
      b.unknown(r);
      return;
    }
    const hookName = str(a.hookName);
    const event = str(a.hookEvent) ?? hookName?.split(":")[0];
    if (kind.startsWith("hook_") && event) {
      const blocking = obj(a.blockingError);
      const content =
        textOf(a.content) ?? str(blocking?.blockingError) ?? str(a.stdout) ?? str(a.message);
      b.add(`hook:${segment(event)}`, {
        hook_name: hookName || event,
        outcome: HOOK_OUTCOMES[kind] ?? "output",
        content,
        command: str(a.command) ?? str(blocking?.command),
        exit_code:
          typeof a.exitCode === "number" && Number.isInteger(a.exitCode) ? a.exitCode : undefined,
        stderr: str(a.stderr),
        duration_ms: count(a.durationMs),
        tool_use_id: id(a.toolUseID),
      });
      // Messages ccmsg's hooks handed over are deliveries like any other.
      for (const d of content === undefined ? [] : deliveriesIn(content))
        b.add("message:session:in", deliveredFields(d));
      return;
    }
    // A prompt typed while the model worked, handed over with the next turn.
    if (kind === "queued_command" && typeof a.prompt === "string") {
      this.userText(b, a.prompt, false, fromPeer(a));
      return;
    }
    b.add(`system:attachment:${segment(kind)}`, { attachment: a });
  }
}

/** Whether a failed call's result says it never ran because it was refused:
 * the person said no at the permission dialog (2.1.328 writes
 * `toolUseResult: "User rejected tool use"` and the text below), or a rule
 * or hook denied it. */
function refused(toolUseResult: unknown, text: string | undefined): boolean {
  if (toolUseResult === "User rejected tool use") return true;
  const t = text?.trimStart() ?? "";
  return (
    t.startsWith("The user doesn't want to proceed with this tool use") ||
    t.startsWith("Permission to use ") ||
    /^Claude requested permissions? to use /.test(t) ||
    /^Hook \S+ denied this tool/.test(t)
  );
}

/** Whether Claude Code marked a record (or a queued prompt) as another
 * session's: `origin.kind: "peer"` (2.1.3xx). */
function fromPeer(r: Json): boolean {
  return obj(r.origin)?.kind === "peer";
}

/** What identifies a content block within its API message. */
function blockKey(block: Json): string | undefined {
  if (block.type === "tool_use") return typeof block.id === "string" ? `u${block.id}` : undefined;
  const text = str(block.text) ?? str(block.thinking) ?? str(block.data);
  if (text === undefined) return undefined;
  return `${String(block.type)}:${text.length}:${text.slice(0, 64)}:${text.slice(-64)}`;
}

function errorText(error: unknown): string {
  const e = obj(error);
  return (
    str(e?.message) ??
    str(obj(e?.error)?.message) ??
    (error === undefined ? "API error" : JSON.stringify(error))
  );
}

/** The contract's use fields of a known tool (§10.5), `{input}` for any
 * other; undefined when a known tool lacks a field its item requires. */
function useFields(name: string, input: Json): Json | undefined {
  switch (name) {
    case "Bash": {
      const command = str(input.command);
      return command === undefined ? undefined : { command, description: str(input.description) };
    }
    case "Read": {
      const file_path = id(input.file_path);
      return file_path === undefined
        ? undefined
        : { file_path, offset: count(input.offset), limit: count(input.limit) };
    }
    case "Write": {
      const file_path = id(input.file_path);
      return file_path === undefined
        ? undefined
        : { file_path, lines: lineCount(str(input.content)) };
    }
    case "Edit": {
      const file_path = id(input.file_path);
      return file_path === undefined
        ? undefined
        : {
            file_path,
            old_lines: lineCount(str(input.old_string)),
            new_lines: lineCount(str(input.new_string)),
          };
    }
    case "Grep":
    case "Glob": {
      const pattern = str(input.pattern);
      return pattern === undefined ? undefined : { pattern, path: str(input.path) };
    }
    case "WebFetch": {
      const url = id(input.url);
      return url === undefined ? undefined : { url, prompt: str(input.prompt) };
    }
    case "WebSearch": {
      const query = str(input.query);
      return query === undefined ? undefined : { query };
    }
    case "Agent":
      return {
        prompt: str(input.prompt) ?? "",
        name: str(input.name),
        subagent_type: str(input.subagent_type),
        description: str(input.description),
      };
    case "SendMessage": {
      const to = id(input.to) ?? id(input.recipient);
      return to === undefined ? undefined : { to, summary: str(input.summary) };
    }
    case "Monitor":
      return {
        description: str(input.description) ?? "",
        command: str(input.command),
        persistent: flag(input.persistent),
        timeout_ms: count(input.timeout_ms) ?? count(input.timeout),
      };
    case "Skill": {
      const skill = id(input.skill) ?? id(input.command);
      return skill === undefined ? undefined : { skill, args: str(input.args) };
    }
    case "TodoWrite": {
      const list = Array.isArray(input.todos) ? input.todos : [];
      const todos = list.filter(isObject).map((t) => ({
        content: str(t.content) ?? "",
        status: str(t.status) ?? "",
      }));
      return { todos };
    }
    case "TaskStop": {
      const task_id = id(input.task_id) ?? id(input.shell_id) ?? id(input.taskId);
      return task_id === undefined ? undefined : { task_id };
    }
    case "CronCreate": {
      const cron = id(input.cron) ?? id(input.schedule);
      return cron === undefined ? undefined : { cron, prompt: str(input.prompt) };
    }
    default:
      return { input };
  }
}

/** The contract's result fields of a known tool (§10.5), `{result}` for any
 * other. `extra` is the record's structured `toolUseResult`. */
function resultFields(
  tool: string,
  extra: Json | undefined,
  text: string | undefined,
  failed: boolean,
  block: Json,
): Json {
  switch (tool) {
    case "Bash":
      return {
        stdout: str(extra?.stdout) ?? (failed ? undefined : text),
        stderr: str(extra?.stderr) || (failed ? text : undefined),
        interrupted: flag(extra?.interrupted),
      };
    case "Read": {
      const file = obj(extra?.file);
      const body = str(file?.content);
      return {
        lines: count(file?.numLines),
        bytes: body === undefined ? undefined : Buffer.byteLength(body),
      };
    }
    case "Write":
    case "Edit":
    case "TodoWrite":
    case "TaskStop":
      return { ok: !failed };
    case "Grep":
      return {
        matches:
          count(extra?.numLines) ??
          count(extra?.numFiles) ??
          (Array.isArray(extra?.filenames) ? extra.filenames.length : undefined),
      };
    case "Glob":
      return {
        matches:
          count(extra?.numFiles) ??
          (Array.isArray(extra?.filenames) ? extra.filenames.length : undefined),
      };
    case "WebFetch":
      return { text: str(extra?.result) ?? text };
    case "WebSearch":
      return { results: Array.isArray(extra?.results) ? extra.results.length : undefined };
    case "Agent":
      return {
        agent_id: id(extra?.agentId),
        status: str(extra?.status) ?? (failed ? "error" : undefined),
      };
    case "SendMessage":
      return {
        msg_id: id(extra?.msg_id) ?? id(extra?.messageId),
        routing: typeof extra?.routing === "string" ? extra.routing : undefined,
      };
    case "Monitor":
      return { task_id: id(extra?.taskId) ?? id(extra?.task_id) };
    case "Skill":
      return {
        agent_id: id(extra?.agentId),
        background: flag(extra?.background),
        status: str(extra?.status),
      };
    case "CronCreate":
      return { cron_id: id(extra?.id) ?? id(extra?.cronId) ?? id(extra?.cron_id) };
    default:
      return {
        result: extra ?? { content: block.content ?? null, ...(failed ? { is_error: true } : {}) },
      };
  }
}
