import type { ComponentChild } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { SearchAnswer as Answer } from "../../../src/contract/search.js";
import { ApiError, api } from "../lib/api.js";
import { href, replace } from "../lib/router.js";
import { labelOf, rowsBySid } from "../lib/sessions.js";
import { ago, now } from "../lib/time.js";
import { Badge, describeError, ErrorText, Time } from "../ui/common.js";

// Search across sessions (DR-0037's `GET /api/search`, the same index as
// `ccmsg search`): every message, notification and transcript item any
// session said. The query lives in the URL (`#/search?q=…`), so a search can
// be reloaded, shared and gone back to.

/** Quiet time after the last keystroke before the query is sent. */
const DEBOUNCE_MS = 250;
const LIMIT = 50;
/** How often an answer that may still grow is asked for again, and how many
 * times an empty one is (about 10 s) before the view waits for the person. */
const RETRY_MS = 1000;
const EMPTY_RETRIES = 10;

const SINCE: { value: string; label: string }[] = [
  { value: "", label: "Any time" },
  { value: "1h", label: "Past hour" },
  { value: "24h", label: "Past day" },
  { value: "7d", label: "Past week" },
  { value: "30d", label: "Past month" },
];

type State =
  | { kind: "idle" }
  | { kind: "searching"; last?: Answer }
  | { kind: "done"; answer: Answer }
  | { kind: "failed"; error: string };

export function SearchView(props: { q?: string; sid?: string; since?: string }) {
  const [text, setText] = useState(props.q ?? "");
  const [state, setState] = useState<State>({ kind: "idle" });
  /** Answers arrive out of order; only the newest request's is shown. */
  const seq = useRef(0);
  const [tick, setTick] = useState(0);
  const retries = useRef<{ key: string; empty: number; timer?: ReturnType<typeof setTimeout> }>({
    key: "",
    empty: 0,
  });
  const q = (props.q ?? "").trim();
  const { sid, since } = props;

  /** The route's query as last seen, and the one this box last put there:
   * neither the first look (the box starts from it) nor the echo of the
   * box's own query may rewrite the box, where the person may have typed on
   * since — effects run after paint, a keystroke can come first. */
  const seen = useRef(q);
  const pushed = useRef<string | undefined>(undefined);

  // The route changed from outside (back, a link): the box follows it.
  useEffect(() => {
    if (q === seen.current) return;
    seen.current = q;
    if (q === pushed.current) return;
    setText((t) => (t.trim() === q ? t : (props.q ?? "")));
  }, [q]);

  // Typing: the route (and address bar) follows the box once it is quiet.
  useEffect(() => {
    if (text.trim() === q) return;
    const timer = setTimeout(() => {
      pushed.current = text.trim();
      replace({ view: "search", q: text.trim(), sid, since });
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, q, sid, since]);

  useEffect(() => {
    document.title = q === "" ? "Search · ccmsg" : `${q} · search · ccmsg`;
    const mine = ++seq.current;
    if (q === "") {
      retries.current = { key: "", empty: 0 };
      setState({ kind: "idle" });
      return;
    }
    // A new query starts afresh; asking the same one again shows no spinner.
    const key = JSON.stringify([q, sid, since]);
    if (retries.current.key !== key) {
      retries.current = { key, empty: 0 };
      setState((s) => ({ kind: "searching", last: s.kind === "done" ? s.answer : undefined }));
    }
    const params = new URLSearchParams({ q, limit: String(LIMIT) });
    if (sid !== undefined) params.set("sid", sid);
    if (since !== undefined) params.set("since", since);
    api<Answer>("GET", `api/search?${params}`).then(
      (answer) => {
        if (seq.current !== mine) return;
        setState({ kind: "done", answer });
        // Ask again while the answer may still grow: the index is catching
        // up, or nothing matched yet (what was said a moment ago is indexed
        // within a second or so).
        const r = retries.current;
        const again = answer.indexing || (answer.hits.length === 0 && r.empty++ < EMPTY_RETRIES);
        if (again) r.timer = setTimeout(() => setTick((t) => t + 1), RETRY_MS);
      },
      (error: unknown) => {
        if (seq.current !== mine) return;
        setState({
          kind: "failed",
          error:
            error instanceof ApiError && error.code === "invalid_args"
              ? `This query cannot be read: ${error.message}`
              : describeError(error),
        });
      },
    );
    return () => {
      clearTimeout(retries.current.timer);
      document.title = "ccmsg console";
    };
  }, [q, sid, since, tick]);

  const shown =
    state.kind === "done" ? state.answer : state.kind === "searching" ? state.last : undefined;
  const at = now.value;
  return (
    <div class="view search-view">
      <div class="view-head">
        <h1>Search</h1>
      </div>
      <form
        class="toolbar"
        aria-label="Search"
        onSubmit={(e) => {
          e.preventDefault();
          replace({ view: "search", q: text.trim(), sid, since });
        }}
      >
        <label class="search">
          <span class="visually-hidden">Search everything sessions said</span>
          <input
            type="search"
            name="q"
            autoComplete="off"
            placeholder='Words, "a phrase", pref*, AND / OR / NOT…'
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          <span class="visually-hidden">When</span>
          <select
            value={since ?? ""}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              replace({ view: "search", q: text.trim(), sid, since: v === "" ? undefined : v });
            }}
          >
            {SINCE.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        {sid !== undefined && (
          <span class="search-scope">
            In session <a href={href({ view: "session", sid })}>{sessionLabel(sid)}</a>{" "}
            <button
              type="button"
              class="link-button"
              onClick={() => replace({ view: "search", q: text.trim(), since })}
            >
              search all sessions
            </button>
          </span>
        )}
      </form>
      <p class="counts" role="status" aria-live="polite">
        {statusText(state, q)}
      </p>
      {state.kind === "failed" && <ErrorText error={state.error} />}
      {state.kind === "idle" && (
        <p class="empty">
          Type to search every message, notification and transcript item of every session. Words
          must all occur; use <code>"quotes"</code> for a phrase, <code>word*</code> for a prefix,
          and <code>OR</code> / <code>NOT</code> between words.
        </p>
      )}
      {shown?.indexing && (
        <p class="hint">The index is still reading its sources: some results may be missing.</p>
      )}
      {shown !== undefined && shown.hits.length > 0 && (
        <ol class="search-results" aria-label="Results">
          {shown.hits.map((h) => (
            <li key={`${h.sid}:${h.item ?? h.mid ?? h.at}`} class="search-hit">
              <div class="feed-head">
                <a href={href({ view: "session", sid: h.sid })}>{sessionLabel(h.sid)}</a>
                <Badge tone="muted">{h.type}</Badge>
                {h.from !== undefined && (
                  <span class="hint">from {h.from === "user" ? "you" : sessionLabel(h.from)}</span>
                )}
                {h.agent_id !== undefined && <span class="hint">agent {h.agent_id}</span>}
                <Time at={h.at}>{ago(h.at, at)}</Time>
              </div>
              <p class="feed-text">
                <Snippet text={h.snippet} highlights={h.highlights} />
              </p>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** A session's name where the console knows it, else its id's head. */
function sessionLabel(sid: string): string {
  const row = rowsBySid.value.get(sid);
  return row === undefined ? sid.slice(0, 8) : labelOf(row);
}

function statusText(state: State, q: string): string {
  if (q === "") return "";
  switch (state.kind) {
    case "searching":
      return "Searching…";
    case "failed":
      return "The search failed.";
    case "done": {
      const n = state.answer.hits.length;
      if (n === 0) return `Nothing found for ${q}.`;
      return `${n}${state.answer.more ? "+" : ""} result${n === 1 ? "" : "s"}${state.answer.more ? ` (the best ${n} shown)` : ""}.`;
    }
    default:
      return "";
  }
}

/** The snippet with its matched words marked: text nodes only, never markup
 * from the index. */
function Snippet({ text, highlights }: { text: string; highlights: [number, number][] }) {
  const parts: ComponentChild[] = [];
  let at = 0;
  for (const [start, end] of [...highlights].sort((a, b) => a[0] - b[0])) {
    if (start < at || end <= start || end > text.length) continue;
    if (start > at) parts.push(text.slice(at, start));
    parts.push(<mark key={start}>{text.slice(start, end)}</mark>);
    at = end;
  }
  if (at < text.length) parts.push(text.slice(at));
  return <>{parts}</>;
}
