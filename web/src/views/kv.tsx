import { useState } from "preact/hooks";
import type { KvEntry } from "../../../src/contract/kv.js";
import { topics, wire } from "../app-state.js";
import { useTopic } from "../conn/topics.js";
import { go, href } from "../lib/router.js";
import { ago, now } from "../lib/time.js";
import { CONSOLE_NS, kvNamespaces, rememberNamespace } from "../settings.js";
import { describeError, ErrorText, StaleNote, Time } from "../ui/common.js";

/**
 * The key-value store, one namespace at a time (`kv:<ns>`, live). The
 * contract has no op that lists namespaces, so the console lists the ones it
 * was asked to open (kept in its own namespace, `console/kv_namespaces`).
 * Values are JSON: edited as text, checked before they are written.
 */
const NS = /^[a-z][a-z0-9_]{0,63}$/;

export function KvView({ ns }: { ns?: string }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const open = (e: Event) => {
    e.preventDefault();
    const n = name.trim();
    if (!NS.test(n)) {
      setError("a namespace is a lower-case letter, then letters, digits or _ (at most 64)");
      return;
    }
    setError(undefined);
    void rememberNamespace(n).catch(() => {});
    go({ view: "kv", ns: n });
  };
  return (
    <div class="view kv-view">
      <div class="view-head">
        <h1>Key-value store</h1>
      </div>
      <nav aria-label="Namespaces" class="toolbar">
        <ul class="ns-list">
          {kvNamespaces.value.map((n) => (
            <li key={n}>
              <a href={href({ view: "kv", ns: n })} aria-current={n === ns ? "page" : undefined}>
                {n}
              </a>
            </li>
          ))}
        </ul>
        <form onSubmit={open} class="create-form">
          <label>
            Open namespace{" "}
            <input
              type="text"
              value={name}
              size={14}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Open</button>
        </form>
      </nav>
      <ErrorText error={error} />
      {ns === undefined ? (
        <p class="empty">Pick a namespace. The console keeps its own settings in "{CONSOLE_NS}".</p>
      ) : (
        <Namespace key={ns} ns={ns} />
      )}
    </div>
  );
}

function Namespace({ ns }: { ns: string }) {
  const topic = useTopic<{ entries: KvEntry[] }>(topics, `kv:${ns}`)!;
  const entries = (topic.value.value?.entries ?? [])
    .filter((e): e is KvEntry & { value: unknown } => "value" in e)
    .sort((a, b) => a.key.localeCompare(b.key));
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const at = now.value;
  return (
    <section aria-labelledby="ns-h">
      <h2 id="ns-h">
        {ns} <span class="count">{entries.length} keys</span>
      </h2>
      <StaleNote stale={topic.stale.value && topic.value.value !== undefined} what="entries" />
      {topic.error.value !== undefined && <ErrorText error={describeError(topic.error.value)} />}
      <Editor ns={ns} onDone={() => setEditing(undefined)} />
      {entries.length === 0 ? (
        <p class="empty">
          {topic.value.value === undefined ? "Loading…" : "No keys in this namespace."}
        </p>
      ) : (
        <table class="kv-table">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col" class="kv-updated">
                Updated
              </th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) =>
              editing === e.key ? (
                <tr key={e.key}>
                  <td colSpan={4}>
                    <Editor ns={ns} entry={e} onDone={() => setEditing(undefined)} />
                  </td>
                </tr>
              ) : (
                <tr key={e.key}>
                  <td class="mono">{e.key}</td>
                  <td class="kv-value mono">{preview(e.value)}</td>
                  <td class="kv-updated">
                    <Time at={e.updated_at}>{ago(e.updated_at, at)}</Time>
                  </td>
                  <td>
                    <button type="button" class="small" onClick={() => setEditing(e.key)}>
                      Edit<span class="visually-hidden"> {e.key}</span>
                    </button>{" "}
                    <DeleteButton ns={ns} k={e.key} />
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

function preview(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function DeleteButton({ ns, k }: { ns: string; k: string }) {
  const [error, setError] = useState<string | undefined>(undefined);
  return (
    <>
      <button
        type="button"
        class="small danger"
        onClick={() => {
          if (!confirm(`Delete ${ns}/${k}?`)) return;
          wire.request("kv_delete", { ns, key: k }).catch((e) => setError(describeError(e)));
        }}
      >
        Delete<span class="visually-hidden"> {k}</span>
      </button>
      <ErrorText error={error} />
    </>
  );
}

/** Add a key (no `entry`) or edit one: the value is JSON; a text that is not
 * JSON can be stored as a string on purpose. */
function Editor({
  ns,
  entry,
  onDone,
}: {
  ns: string;
  entry?: { key: string; value: unknown };
  onDone(): void;
}) {
  const [key, setKey] = useState(entry?.key ?? "");
  const [text, setText] = useState(entry === undefined ? "" : JSON.stringify(entry.value, null, 2));
  const [asString, setAsString] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    let value: unknown;
    if (asString) value = text;
    else {
      try {
        value = JSON.parse(text);
      } catch {
        setError('not JSON: write a JSON value (a string needs quotes), or tick "as text"');
        return;
      }
    }
    setBusy(true);
    try {
      await wire.request("kv_write", { ns, key: key.trim(), value });
      setError(undefined);
      if (entry === undefined) {
        setKey("");
        setText("");
      }
      onDone();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const id = entry === undefined ? "new" : `edit-${entry.key}`;
  return (
    <form
      class="kv-editor"
      onSubmit={save}
      aria-label={entry === undefined ? "Add a key" : `Edit ${entry.key}`}
    >
      {entry === undefined && (
        <label>
          Key{" "}
          <input
            type="text"
            value={key}
            onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          />
        </label>
      )}
      <label for={`kv-value-${id}`}>
        {entry === undefined ? "Value (JSON)" : `Value of ${entry.key} (JSON)`}
      </label>
      <textarea
        id={`kv-value-${id}`}
        class="mono"
        rows={entry === undefined ? 2 : 6}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      <div class="card-actions">
        <label class="check">
          <input
            type="checkbox"
            checked={asString}
            onChange={(e) => setAsString((e.target as HTMLInputElement).checked)}
          />{" "}
          as text
        </label>
        <button
          type="submit"
          class="primary"
          disabled={busy || key.trim() === "" || wire.state.value !== "open"}
        >
          {entry === undefined ? "Add" : "Save"}
        </button>
        {entry !== undefined && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      <ErrorText error={error} />
    </form>
  );
}
