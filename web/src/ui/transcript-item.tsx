import type { ComponentChildren } from "preact";
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
          inbound ? <Sender from={who} /> : who !== "" && <span>to {who}</span>,
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

/** Who sent a message in: a session the console knows by its name, linked
 * to its page; anything else (a session gone from every list, an address of
 * the harness's own) by what the item says, its head when it is long. */
function Sender({ from }: { from: string }) {
  if (from === "") return null;
  const row = rowsBySid.value.get(from);
  return (
    <span class="sender">
      from{" "}
      {row === undefined ? (
        <span title={from}>{from.length > 12 ? `${from.slice(0, 8)}…` : from}</span>
      ) : (
        <a href={href({ view: "session", sid: from })} title={from}>
          {labelOf(row)}
        </a>
      )}
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
  const status = isResult ? "result" : result !== undefined ? "done" : "running";
  return (
    <article class={`titem tool status-${status}`}>
      <div class="titem-head">
        <span class="titem-type">{name}</span>
        <span>
          {isResult ? "result (call not loaded)" : status === "running" ? "no result yet" : ""}
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
