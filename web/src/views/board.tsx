import { signal } from "@preact/signals";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { WorkItem } from "../../../src/contract/ecc/board.js";
import {
  countsSentence,
  isDoneStatus,
  LANES,
  type Lane,
  PRIORITIES,
  workItemLane,
} from "../../../src/contract/ecc/lanes.js";
import { topics, wire } from "../app-state.js";
import { useTopic } from "../conn/topics.js";
import { ApiError, api, apiRetrying } from "../lib/api.js";
import { ago, now } from "../lib/time.js";
import { ownerName, writeSetting } from "../settings.js";
import { describeError, ErrorText, StaleNote, Time } from "../ui/common.js";

/**
 * The work board: lanes from the `work_items` topic (live: a change made
 * anywhere — another tab, the CLI, ECC's tools — moves the card here), and
 * mutations through the control-pane API. A card moves by drag and drop, by
 * its "Move to" menu, or with Alt+←/→ while focus is on the card. A 503
 * `STATE_STORE_BUSY` is shown as "busy, retrying" and retried after the
 * `Retry-After` the instance names.
 */

function lanesOf(items: readonly WorkItem[]): Map<Lane, WorkItem[]> {
  const out = new Map<Lane, WorkItem[]>(LANES.map((l) => [l, []]));
  for (const item of items) out.get(workItemLane(item.status))!.push(item);
  for (const list of out.values()) list.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return out;
}

/** Per card: what a mutation in flight says ("moving…", "busy, retrying in 1 s"). */
const pending = signal<Record<string, { text: string; error?: boolean }>>({});

function setPending(id: string, text: string | undefined, error = false): void {
  const next = { ...pending.peek() };
  if (text === undefined) delete next[id];
  else next[id] = { text, error };
  pending.value = next;
}

async function mutate(id: string, doing: string, path: string, body: unknown): Promise<void> {
  setPending(id, doing);
  try {
    await apiRetrying("POST", path, body, (retryAt) => {
      const s = Math.max(1, Math.round((retryAt - Date.now()) / 1000));
      setPending(id, `busy, retrying in ${s} s`);
    });
    setPending(id, undefined);
  } catch (e) {
    setPending(id, e instanceof ApiError && e.busy ? "busy, retry later" : describeError(e), true);
  }
}

export function moveItem(item: WorkItem, lane: Lane): Promise<void> {
  if (workItemLane(item.status) === lane) return Promise.resolve();
  return mutate(
    item.id,
    `moving to ${lane}…`,
    `api/work-items/${encodeURIComponent(item.id)}/move`,
    {
      lane,
    },
  );
}

function claimItem(item: WorkItem, kind: "human" | "agent"): Promise<void> {
  return mutate(item.id, "claiming…", `api/work-items/${encodeURIComponent(item.id)}/claim`, {
    owner: ownerName.peek(),
    as: kind,
  });
}

interface Readiness {
  readiness: {
    status: string;
    attentionCount: number;
    activeSessions: number;
    blockedWorkItems: number;
  };
  workItems: { totalCount: number; openCount: number; blockedCount: number; closedCount: number };
}

export function BoardView() {
  // Held while the board is shown (and a little after: topics.ts).
  const board = useTopic<{ items: WorkItem[] }>(topics, "work_items")!;
  const items = board.value.value?.items;
  const lanes = useMemo(() => lanesOf(items ?? []), [items]);
  const [status, setStatus] = useState<Readiness | undefined>(undefined);
  const [statusError, setStatusError] = useState<string | undefined>(undefined);
  const frames = board.frames.value;
  const generation = wire.generation.value;
  // The readiness summary follows the board: asked again after changes
  // (a burst of frames asks once).
  useEffect(() => {
    const t = setTimeout(() => {
      api<Readiness>("GET", "api/status").then(
        (r) => {
          setStatus(r);
          setStatusError(undefined);
        },
        (e) => setStatusError(describeError(e)),
      );
    }, 200);
    return () => clearTimeout(t);
  }, [frames, generation]);
  // The card being dragged: read by the lanes' dragover at once, so kept in a
  // ref (a state update would reach the handlers only after a render).
  const dragging = useRef<string | undefined>(undefined);
  const [over, setOver] = useState<Lane | undefined>(undefined);
  const byId = new Map((items ?? []).map((i) => [i.id, i]));
  const loaded = items !== undefined;
  return (
    <div class="view board-view">
      <div class="view-head">
        <h1>Board</h1>
        <ClaimAs />
      </div>
      <ReadinessLine status={status} error={statusError} />
      <CreateForm />
      <StaleNote stale={board.stale.value && loaded} what="board" />
      {board.error.value !== undefined && <ErrorText error={describeError(board.error.value)} />}
      <p class="hint">
        Move a card by dragging it to a lane, with its "Move to" menu, or with Alt+← / Alt+→.
      </p>
      <div class="board">
        {LANES.map((lane) => {
          const list = lanes.get(lane)!;
          return (
            <section
              key={lane}
              class={`lane${over === lane ? " drop-target" : ""}`}
              aria-labelledby={`lane-${lane}`}
              data-lane={lane}
              onDragOver={(e) => {
                if (dragging.current === undefined) return;
                e.preventDefault();
                if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
                setOver(lane);
              }}
              onDragLeave={() => setOver((o) => (o === lane ? undefined : o))}
              onDrop={(e) => {
                e.preventDefault();
                setOver(undefined);
                const id = e.dataTransfer?.getData("text/plain") || dragging.current;
                const item = id === undefined ? undefined : byId.get(id);
                if (item !== undefined) void moveItem(item, lane);
                dragging.current = undefined;
              }}
            >
              <h2 id={`lane-${lane}`}>
                {lane} <span class="count">{list.length}</span>
              </h2>
              <ul class="cards">
                {list.map((item) => (
                  <Card
                    key={item.id}
                    item={item}
                    onDragStart={() => {
                      dragging.current = item.id;
                    }}
                    onDragEnd={() => {
                      dragging.current = undefined;
                      setOver(undefined);
                    }}
                  />
                ))}
              </ul>
            </section>
          );
        })}
      </div>
    </div>
  );
}

function ReadinessLine({ status, error }: { status?: Readiness; error?: string }) {
  // The line keeps its place while it loads, so the lanes do not jump under
  // a pointer about to drag.
  if (status === undefined)
    return (
      <p class="readiness hint">
        {error === undefined ? "Reading the readiness summary…" : `No readiness summary: ${error}`}
      </p>
    );
  const r = status.readiness;
  const w = status.workItems;
  return (
    <p class="readiness" aria-live="polite">
      <span class={`badge ${r.status === "ok" ? "badge-good" : "badge-warn"}`}>
        readiness: {r.status}
      </span>{" "}
      {r.attentionCount} need attention · {r.activeSessions} active session
      {r.activeSessions === 1 ? "" : "s"} · work items:{" "}
      {countsSentence({
        total: w.totalCount,
        open: w.openCount,
        blocked: w.blockedCount,
        done: w.closedCount,
      })}
    </p>
  );
}

function ClaimAs() {
  const [name, setName] = useState(ownerName.value);
  useEffect(() => setName(ownerName.value), [ownerName.value]);
  return (
    <div class="head-actions">
      <label>
        Claim as{" "}
        <input
          type="text"
          value={name}
          size={12}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
          onChange={() => {
            if (name.trim() !== "" && name !== ownerName.peek())
              void writeSetting("owner", name.trim());
          }}
        />
      </label>
    </div>
  );
}

function CreateForm() {
  const [title, setTitle] = useState("");
  const [priority, setPriority] = useState("normal");
  const [state, setState] = useState<{ text?: string; error?: boolean }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    if (title.trim() === "") return;
    setState({ text: "adding…" });
    try {
      await apiRetrying("POST", "api/work-items", { title: title.trim(), priority }, (retryAt) =>
        setState({
          text: `busy, retrying in ${Math.max(1, Math.round((retryAt - Date.now()) / 1000))} s`,
        }),
      );
      setTitle("");
      setState({});
    } catch (err) {
      setState({
        text: err instanceof ApiError && err.busy ? "busy, retry" : describeError(err),
        error: true,
      });
    }
  };
  return (
    <form class="create-form" onSubmit={submit} aria-label="New work item">
      <label class="visually-hidden" for="new-item-title">
        New work item title
      </label>
      <input
        id="new-item-title"
        type="text"
        placeholder="New work item…"
        value={title}
        maxLength={1000}
        onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
      />
      <label>
        <span class="visually-hidden">Priority</span>
        <select
          value={priority}
          onChange={(e) => setPriority((e.target as HTMLSelectElement).value)}
        >
          {PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="primary" disabled={title.trim() === ""}>
        Add
      </button>
      {state.text !== undefined && (
        <span class={state.error ? "error-text" : "hint"} role="status">
          {state.text}
        </span>
      )}
    </form>
  );
}

function Card(props: { item: WorkItem; onDragStart(): void; onDragEnd(): void }) {
  const { item } = props;
  const lane = workItemLane(item.status);
  const p = pending.value[item.id];
  const kind = (item.metadata as { assigneeKind?: string } | null)?.assigneeKind;
  const at = now.value;
  const updated = Date.parse(item.updatedAt);
  const onKey = (e: KeyboardEvent) => {
    if (!e.altKey || (e.key !== "ArrowLeft" && e.key !== "ArrowRight")) return;
    const i = LANES.indexOf(lane) + (e.key === "ArrowRight" ? 1 : -1);
    const to = LANES[i];
    if (to === undefined) return;
    e.preventDefault();
    void moveItem(item, to);
  };
  return (
    <li
      class="card"
      draggable
      data-item={item.id}
      onDragStart={(e) => {
        e.dataTransfer?.setData("text/plain", item.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
        props.onDragStart();
      }}
      onDragEnd={props.onDragEnd}
      onKeyDown={onKey}
    >
      <p class="card-title">{item.title}</p>
      <div class="card-meta">
        {item.priority !== null && <span>{item.priority}</span>}
        <span>
          {item.owner === null
            ? "unassigned"
            : `${kind !== undefined ? `[${kind}] ` : ""}${item.owner}`}
        </span>
        <span>{item.source}</span>
        {Number.isFinite(updated) && (
          <span>
            <Time at={updated}>{ago(updated, at)}</Time>
          </span>
        )}
      </div>
      <div class="card-actions">
        {item.owner === null && !isDoneStatus(item.status) && (
          <button type="button" class="small" onClick={() => void claimItem(item, "human")}>
            Claim<span class="visually-hidden"> {item.title}</span>
          </button>
        )}
        <label>
          <span class="visually-hidden">Move {item.title} to lane</span>
          <select
            value={lane}
            onChange={(e) => void moveItem(item, (e.target as HTMLSelectElement).value as Lane)}
          >
            {LANES.map((l) => (
              <option key={l} value={l}>
                {l === lane ? `in ${l}` : `move to ${l}`}
              </option>
            ))}
          </select>
        </label>
        {p !== undefined && (
          <span class={p.error ? "error-text" : "card-busy"} role="status">
            {p.text}
          </span>
        )}
      </div>
    </li>
  );
}
