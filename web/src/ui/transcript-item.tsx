import type { ComponentChildren } from "preact";
import { messageStatus, useReceipt } from "../lib/receipts.js";
import { href } from "../lib/router.js";
import { labelOf, rowsBySid } from "../lib/sessions.js";
import { clockTime, fullTime } from "../lib/time.js";
import type { Item } from "../lib/timeline.js";
import { Markdown } from "./markdown.js";

/**
 * One timeline row: an item of the contract's vocabulary (§10), shown by its
 * type. A tool call carries its result folded inside it (opened on demand);
 * texts are Markdown rendered to nodes; anything unknown is shown as its
 * JSON rather than dropped.
 */
export function TranscriptItemView({ item, result }: { item: Item; result?: Item }) {
  const t = item.type;
  const f = item as unknown as Record<string, unknown>;
  const head = (label: ComponentChildren, extra?: ComponentChildren) => (
    <div class="titem-head">
      <span class="titem-type">{label}</span>
      {extra}
      <time dateTime={new Date(item.at).toISOString()} title={fullTime(item.at)}>
        {clockTime(item.at)}
      </time>
    </div>
  );
  if (t === "message:user:in" || t === "message:user:out") {
    const you = t === "message:user:in";
    return (
      <article
        class={`titem ${you ? "user" : "assistant"}`}
        aria-label={you ? "Person" : "Session"}
      >
        {head(you ? "Person" : "Session")}
        <div class="titem-body">
          <Markdown text={str(f.text)} />
        </div>
      </article>
    );
  }
  if (t === "message:session:in" || t === "message:session:out") {
    const inbound = t === "message:session:in";
    const who = inbound ? str(f.from) : str(f.to);
    return (
      <article
        class={`titem session-msg ${inbound ? "msg-in" : "msg-out"}`}
        aria-label={inbound ? "Message in" : "Message out"}
      >
        {head(
          inbound ? "Message in" : "Message out",
          <>
            <Session sid={who} word={inbound ? "from" : "to"} />
            <Status item={item} />
          </>,
        )}
        <div class="titem-body">
          <Markdown text={str(f.text)} />
        </div>
      </article>
    );
  }
  if (t === "thinking") {
    return (
      <article class="titem thinking">
        {head("Thinking")}
        <details>
          <summary>Show thinking</summary>
          <Markdown text={str(f.text)} />
        </details>
      </article>
    );
  }
  if (t.startsWith("tool:") || t === "message:sub:out" || t === "message:sub:in") {
    return <CallView item={item} result={result} />;
  }
  if (t === "notice:slash") {
    return (
      <article class="titem notice">
        {head("Command")}
        <code>
          /{str(f.command).replace(/^\//, "")} {str(f.args)}
        </code>
        {f.stdout !== undefined && <pre>{str(f.stdout)}</pre>}
      </article>
    );
  }
  if (t === "system:api-error") {
    return (
      <article class="titem error">
        {head("API error")}
        <pre>{str(f.text)}</pre>
      </article>
    );
  }
  if (t.startsWith("hook:")) {
    return (
      <article class="titem hook">
        {head(`Hook ${t.slice(5)}`, <span>{str(f.outcome)}</span>)}
        {f.content !== undefined && (
          <details>
            <summary>{str(f.hook_name) || "output"}</summary>
            <pre>{str(f.content)}</pre>
          </details>
        )}
      </article>
    );
  }
  if (typeof f.text === "string") {
    return (
      <article class="titem system">
        {head(label(t))}
        <div class="titem-body">
          <Markdown text={f.text} />
        </div>
      </article>
    );
  }
  return (
    <article class="titem other">
      {head(label(t))}
      <details>
        <summary>Details</summary>
        <pre>{json(without(f, ["id", "uuid", "source", "type", "at", "turn"]))}</pre>
      </details>
    </article>
  );
}

/** Who sent a message in, or whom a message out went to: a session the
 * console knows by its name, linked to its page; anything else (a session
 * gone from every list, an address of the harness's own) by what the item
 * says, its head when it is long. */
function Session({ sid, word }: { sid: string; word: "from" | "to" }) {
  if (sid === "") return null;
  const row = rowsBySid.value.get(sid);
  return (
    <span class={word === "from" ? "sender" : "recipient"}>
      {word}{" "}
      {row === undefined ? (
        <span title={sid}>{sid.length > 12 ? `${sid.slice(0, 8)}…` : sid}</span>
      ) : (
        <a href={href({ view: "session", sid })} title={sid}>
          {labelOf(row)}
        </a>
      )}
    </span>
  );
}

/** What became of a message (lib/receipts.ts), when anything is known. */
function Status({ item }: { item: Item }) {
  const f = item as unknown as Record<string, unknown>;
  const receipt = useReceipt(typeof f.msg_id === "string" ? f.msg_id : undefined);
  const status = messageStatus(f as { type: string }, receipt.value);
  if (status === undefined) return null;
  return (
    <span class={`msg-status msg-${status.state}`} title={status.title || undefined}>
      {status.text}
    </span>
  );
}

/** A tool call (or a sub-agent's task) with its result folded in. */
function CallView({ item, result }: { item: Item; result?: Item }) {
  const f = item as unknown as Record<string, unknown>;
  const isResult = item.role === "result";
  const name = item.type.startsWith("tool:")
    ? item.type.slice(5)
    : `Agent${typeof f.subagent_type === "string" ? ` (${f.subagent_type})` : ""}`;
  // A call the person (or a rule) refused never ran; one that failed did.
  const ended = (result ?? (isResult ? item : undefined)) as { failure?: string } | undefined;
  const failure = ended?.failure;
  const status = isResult
    ? "result"
    : failure !== undefined
      ? failure
      : result !== undefined
        ? "done"
        : "running";
  return (
    <article class={`titem tool status-${status}`}>
      <div class="titem-head">
        <span class="titem-type">{name}</span>
        <span class={failure === undefined ? undefined : "call-failure"}>
          {failure === "denied"
            ? "denied: did not run"
            : failure === "failed"
              ? "failed"
              : isResult
                ? "result (call not loaded)"
                : status === "running"
                  ? "no result yet"
                  : ""}
        </span>
        <time dateTime={new Date(item.at).toISOString()} title={fullTime(item.at)}>
          {clockTime(item.at)}
        </time>
      </div>
      <div class="titem-body">
        <code class="call-summary">{summary(name, f)}</code>
      </div>
      {(result !== undefined || isResult) && (
        <details>
          <summary>Result</summary>
          <pre>{resultText((result ?? item) as unknown as Record<string, unknown>)}</pre>
        </details>
      )}
    </article>
  );
}

/** One line saying what a call does, by the contract's per-tool fields. */
function summary(tool: string, f: Record<string, unknown>): string {
  const first = (...keys: string[]) => {
    for (const k of keys) if (typeof f[k] === "string" && f[k] !== "") return f[k] as string;
    return undefined;
  };
  const line =
    first(
      "command",
      "file_path",
      "pattern",
      "url",
      "query",
      "description",
      "skill",
      "to",
      "cron",
    ) ??
    first("prompt", "task_id", "text") ??
    (f.input !== undefined ? json(f.input) : undefined) ??
    (Array.isArray(f.todos) ? `${f.todos.length} todos` : tool);
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}

function resultText(r: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const k of ["stdout", "stderr", "text", "matches", "results", "lines", "status", "ok"]) {
    const v = r[k];
    if (v === undefined) continue;
    parts.push(typeof v === "string" ? (k === "stderr" ? `stderr:\n${v}` : v) : `${k}: ${json(v)}`);
  }
  if (r.result !== undefined) parts.push(json(r.result));
  if (r.interrupted === true) parts.push("(interrupted)");
  const text = parts.join("\n") || "(no output)";
  return text.length > 20_000
    ? `${text.slice(0, 20_000)}\n… (${text.length - 20_000} more characters)`
    : text;
}

function label(type: string): string {
  return type
    .split(":")
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
    .join(" · ");
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

function json(v: unknown): string {
  try {
    return JSON.stringify(v, null, 2) ?? "";
  } catch {
    return String(v);
  }
}

function without(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}
