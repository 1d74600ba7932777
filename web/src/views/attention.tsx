import { useState } from "preact/hooks";
import type { AttentionItem, AttentionQuestion } from "../../../src/contract/attention.js";
import { wire } from "../app-state.js";
import {
  attentionError,
  attentionLoaded,
  attentionStale,
  decide,
  ENDED_SHOWN_MS,
  ended,
  endText,
  itemKey,
  pending,
  refusals,
  summary,
} from "../lib/attention.js";
import { askPermission, permission } from "../lib/notifications.js";
import { href } from "../lib/router.js";
import { labelOf, rowsBySid } from "../lib/sessions.js";
import { ago, now } from "../lib/time.js";
import { Badge, describeError, ErrorText, StaleNote, Time } from "../ui/common.js";

/**
 * "Needs you" (DR-0062): every prompt and question a session waits on the
 * person for, oldest first, answered from here — Allow, Deny with a message
 * the model receives, "always allow" with the harness's own suggestions, a
 * question's answers. The harness's dialog is up in the terminal all along;
 * whichever answer comes first ends the item, and the lately ended ones say
 * how.
 */
export function AttentionView() {
  const waiting = pending.value;
  const at = now.value;
  const lately = ended.value.filter((i) => at - (i.ended_at ?? 0) < ENDED_SHOWN_MS).slice(0, 20);
  const perm = permission.value;
  const error = attentionError.value;
  return (
    <div class="view attention-view">
      <div class="view-head">
        <h1>
          Needs you <span class="count">{waiting.length}</span>
        </h1>
        <div class="head-actions">
          {perm === "default" && (
            <button type="button" onClick={() => void askPermission()}>
              Show browser notifications
            </button>
          )}
          {perm === "granted" && (
            <p class="hint">A browser notification announces each new prompt.</p>
          )}
        </div>
      </div>
      <p class="hint">
        Permission prompts and questions of your sessions. The dialog stays open in the terminal
        too: whichever is answered first counts.
      </p>
      <StaleNote stale={attentionStale.value && attentionLoaded.value} what="queue" />
      {error !== undefined && <ErrorText error={describeError(error)} />}
      {waiting.length === 0 ? (
        <p class="empty">{attentionLoaded.value ? "Nothing waits for you." : "Loading…"}</p>
      ) : (
        <ol class="att-list" aria-label="Waiting for you, oldest first">
          {waiting.map((item) => (
            <PendingItem key={itemKey(item)} item={item} at={at} />
          ))}
        </ol>
      )}
      {lately.length > 0 && (
        <>
          <h2>Lately ended</h2>
          <ol class="att-list att-ended" aria-label="Lately ended, newest first">
            {lately.map((item) => (
              <EndedItem key={itemKey(item)} item={item} at={at} />
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

/** The session, tool, where and since when, and on which instance. */
function ItemHead({ item, at }: { item: AttentionItem; at: number }) {
  const row = rowsBySid.value.get(item.sid);
  const label = row !== undefined ? labelOf(row) : (item.sid_label ?? item.sid.slice(0, 8));
  const here = wire.instance.value === item.instance;
  return (
    <div class="att-head">
      <a href={href({ view: "session", sid: item.sid })} class="att-session">
        {label}
      </a>
      <Badge tone={item.kind === "question" ? "info" : "warn"}>
        {item.kind === "question" ? "question" : item.tool}
      </Badge>
      {item.end === undefined ? (
        <span class="hint">
          waiting since <Time at={item.asked_at}>{ago(item.asked_at, at)}</Time>
        </span>
      ) : (
        <span class="hint">
          asked <Time at={item.asked_at}>{ago(item.asked_at, at)}</Time>
        </span>
      )}
      <span class="hint" title={item.instance}>
        {here ? "this instance" : `instance ${item.instance.slice(0, 8)}`}
      </span>
    </div>
  );
}

/** The tool's input as the instance kept it (bounded, secrets masked). */
function Input({ item }: { item: AttentionItem }) {
  let text = item.input;
  try {
    text = JSON.stringify(JSON.parse(item.input), null, 2);
  } catch {}
  return (
    <>
      {item.cwd !== undefined && (
        <p class="att-cwd hint">
          in <code>{item.cwd}</code>
        </p>
      )}
      <pre class="att-input">
        {text}
        {item.input_truncated === true ? "\n… (cut)" : ""}
      </pre>
    </>
  );
}

function PendingItem({ item, at }: { item: AttentionItem; at: number }) {
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [answers, setAnswers] = useState<Record<string, string[]>>({});
  const open = wire.state.value === "open";
  const refused = refusals.value.get(itemKey(item));
  const run = async (d: Parameters<typeof decide>[1]) => {
    setBusy(true);
    setError(undefined);
    try {
      await decide(item, d);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const questions = item.kind === "question" ? (item.questions ?? []) : [];
  const complete = questions.every((q) => (answers[q.question] ?? []).length > 0);
  const canAlways = (item.suggestions?.length ?? 0) > 0;
  const idBase = `att-${item.instance.slice(0, 8)}-${item.id}`;
  return (
    <li
      class="att-item"
      data-attention={item.id}
      data-instance={item.instance}
      data-kind={item.kind}
    >
      <ItemHead item={item} at={at} />
      {questions.length > 0 ? (
        questions.map((q, n) => (
          <Question
            key={q.question}
            q={q}
            name={`${idBase}-q${n}`}
            chosen={answers[q.question] ?? []}
            onChange={(labels) => setAnswers({ ...answers, [q.question]: labels })}
          />
        ))
      ) : (
        <Input item={item} />
      )}
      <div class="att-actions">
        {questions.length > 0 ? (
          <button
            type="button"
            class="primary"
            data-decide="answer"
            disabled={!open || busy || !complete}
            onClick={() =>
              void run({
                behavior: "allow",
                answers: Object.fromEntries(
                  Object.entries(answers).map(([k, v]) => [k, v.join(", ")]),
                ),
              })
            }
          >
            Answer
          </button>
        ) : (
          <>
            <button
              type="button"
              class="primary"
              data-decide="allow"
              disabled={!open || busy}
              onClick={() => void run({ behavior: "allow" })}
            >
              Allow
            </button>
            {canAlways && (
              <button
                type="button"
                data-decide="always"
                disabled={!open || busy}
                title={suggestionsText(item.suggestions ?? [])}
                onClick={() => void run({ behavior: "allow", always: true })}
              >
                Always allow
              </button>
            )}
          </>
        )}
        <span class="att-deny">
          <label class="visually-hidden" for={`${idBase}-msg`}>
            Message for the model when denied
          </label>
          <input
            id={`${idBase}-msg`}
            type="text"
            value={message}
            maxLength={2000}
            placeholder="Why not (optional)"
            onInput={(e) => setMessage((e.target as HTMLInputElement).value)}
          />
          <button
            type="button"
            class="danger"
            data-decide="deny"
            disabled={!open || busy}
            onClick={() =>
              void run({
                behavior: "deny",
                ...(message.trim() === "" ? {} : { message: message.trim() }),
              })
            }
          >
            Deny
          </button>
        </span>
      </div>
      {canAlways && (
        <p class="hint att-always">Always: {suggestionsText(item.suggestions ?? [])}</p>
      )}
      {refused !== undefined && (
        <p class="error-text" role="alert" data-refused>
          Not taken: {refused}
        </p>
      )}
      <ErrorText error={error} />
    </li>
  );
}

/** One question: one option (radio) or several (checkboxes). */
function Question(props: {
  q: AttentionQuestion;
  name: string;
  chosen: string[];
  onChange(labels: string[]): void;
}) {
  const { q, name, chosen } = props;
  const multi = q.multi_select === true;
  return (
    <fieldset class="att-question">
      <legend>
        {q.header !== undefined && <span class="badge badge-muted">{q.header}</span>} {q.question}
      </legend>
      {q.options.map((o, n) => (
        <label key={o.label} class="att-option" for={`${name}-${n}`}>
          <input
            id={`${name}-${n}`}
            type={multi ? "checkbox" : "radio"}
            name={name}
            value={o.label}
            checked={chosen.includes(o.label)}
            onChange={(e) => {
              const on = (e.target as HTMLInputElement).checked;
              props.onChange(
                multi
                  ? on
                    ? [...chosen, o.label]
                    : chosen.filter((l) => l !== o.label)
                  : [o.label],
              );
            }}
          />{" "}
          <span>{o.label}</span>
          {o.description !== undefined && <span class="hint"> — {o.description}</span>}
        </label>
      ))}
    </fieldset>
  );
}

function EndedItem({ item, at }: { item: AttentionItem; at: number }) {
  const good = item.end === "allowed";
  const toTerminal =
    item.end === "timed_out" ||
    item.end === "hook_gone" ||
    item.end === "answered_in_terminal" ||
    item.end === "at_terminal" ||
    item.end === "terminal_only";
  const mine = refusals.value.get(itemKey(item));
  return (
    <li
      class="att-item ended"
      data-attention={item.id}
      data-instance={item.instance}
      data-end={item.end}
    >
      <ItemHead item={item} at={at} />
      {mine !== undefined && (
        <p class="error-text" role="alert" data-refused-here>
          Your decision was not taken: {mine}
        </p>
      )}
      <p class="att-summary mono">{summary(item, 160)}</p>
      <p>
        <Badge tone={good ? "good" : toTerminal ? "muted" : "bad"}>{endText(item)}</Badge>{" "}
        {item.ended_at !== undefined && <Time at={item.ended_at}>{ago(item.ended_at, at)}</Time>}
      </p>
      {item.message !== undefined && <p class="hint">Message: {item.message}</p>}
      {item.answers !== undefined && (
        <ul class="att-answers">
          {Object.entries(item.answers).map(([q, a]) => (
            <li key={q}>
              {q} → <strong>{a}</strong>
            </li>
          ))}
        </ul>
      )}
      {(item.refused ?? []).map((r) => (
        <p class="hint att-refusal" key={r.at} data-refused>
          A later {r.behavior}
          {r.by.via === undefined ? "" : ` from the ${r.by.via}`} was refused: {r.reason}
        </p>
      ))}
    </li>
  );
}

/** The harness's suggestions in words, as far as their kinds are known. */
export function suggestionsText(suggestions: unknown[]): string {
  return suggestions
    .map((s) => {
      const o = (s ?? {}) as {
        type?: string;
        directories?: string[];
        rules?: { toolName?: string; ruleContent?: string }[];
        mode?: string;
        destination?: string;
      };
      const where = o.destination === undefined ? "" : ` (${o.destination})`;
      if (o.type === "addDirectories")
        return `access to ${(o.directories ?? []).join(", ")}${where}`;
      if (o.type === "addRules")
        return `${(o.rules ?? []).map((r) => `${r.toolName ?? "?"}${r.ruleContent === undefined ? "" : `(${r.ruleContent})`}`).join(", ")}${where}`;
      if (o.type === "setMode") return `mode ${o.mode ?? "?"}${where}`;
      return `${o.type ?? "a rule"}${where}`;
    })
    .join("; ");
}
