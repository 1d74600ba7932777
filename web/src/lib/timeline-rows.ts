import type { AttentionItem } from "../../../src/contract/attention.js";
import type { TranscriptItem } from "../../../src/contract/transcripts.js";

// What the timeline shows, computed from items alone (no connection, no DOM),
// so it is tested on its own.

/** An item as the timeline reads it: the fields every item has (contract
 * §10.3–10.4) and whatever its type adds. */
export type Item = TranscriptItem & {
  id: string;
  type: string;
  at: number;
  role?: "use" | "result";
  result_item?: string;
  parent_item?: string;
};

/** An item, with its result folded in when it is a call whose result is loaded. */
export type ItemRow = { kind: "item"; item: Item; result?: Item };

/** What the timeline shows, oldest first: an item row; a run of the harness's
 * notes to itself, folded into one (`foldNotes`); or the marker of a gap that
 * was not loaded. */
export type Row =
  | ItemRow
  | { kind: "notes"; id: string; rows: ItemRow[] }
  | { kind: "gap"; id: string; after: string }
  /** What the session asked the person (DR-0062), and how it ended. */
  | { kind: "attention"; id: string; item: AttentionItem };

/** When a row happened, for placing others among rows; a gap has no time
 * of its own (it stays after what it follows). */
function rowAt(r: Row): number | undefined {
  if (r.kind === "item") return r.item.at;
  if (r.kind === "notes") return r.rows[0]?.item.at;
  if (r.kind === "attention") return r.item.asked_at;
  return undefined;
}

/** The session's attention items among its rows, each where it was asked:
 * before the first row that came later. The rows' order is kept. */
export function withAttention(rows: readonly Row[], items: readonly AttentionItem[]): Row[] {
  if (items.length === 0) return rows as Row[];
  const asks = [...items].sort((a, b) => a.asked_at - b.asked_at || a.id - b.id);
  const out: Row[] = [];
  let next = 0;
  for (const r of rows) {
    const at = rowAt(r);
    while (next < asks.length && at !== undefined && asks[next]!.asked_at < at)
      out.push(attentionRow(asks[next++]!));
    out.push(r);
  }
  while (next < asks.length) out.push(attentionRow(asks[next++]!));
  return out;
}

function attentionRow(item: AttentionItem): Row {
  return { kind: "attention", id: `attention:${item.id}`, item };
}

/**
 * Whether an item is the harness's bookkeeping rather than the conversation:
 * what it attached for its model (the date, the environment, skill and agent
 * listings, deferred-tool deltas, snapshots), hook runs that only added or
 * printed something, its caveats, and records nothing could place. A hook
 * that blocked is kept in sight: it explains why a turn went the way it did.
 */
export function isHarnessNote(item: Item): boolean {
  const t = item.type;
  if (t.startsWith("system:attachment:")) return true;
  if (t.startsWith("hook:")) return (item as { outcome?: unknown }).outcome !== "block";
  return t === "system:caveat" || t === "system:unknown";
}

/** Each run of consecutive harness notes as one row (its id from the run's
 * first item, so it keeps its place and its open state as the run grows).
 * Gaps end a run; the conversation around it stays as it was. */
export function foldNotes(rows: readonly Row[]): Row[] {
  const out: Row[] = [];
  let run: ItemRow[] = [];
  const flush = () => {
    if (run.length > 0) out.push({ kind: "notes", id: `notes:${run[0]!.item.id}`, rows: run });
    run = [];
  };
  for (const r of rows) {
    if (r.kind === "item" && isHarnessNote(r.item)) {
      run.push(r);
      continue;
    }
    flush();
    out.push(r);
  }
  flush();
  return out;
}

/** Calls folded with their results: a result whose call is loaded is shown
 * inside the call, not on its own. A sub-agent's start is one record that
 * gives two items — the `tool:Agent` call and the `message:sub:out` task
 * (with the agent's answer as its result) — and is shown once, as the task. */
export function rowsOf(items: Item[], gapsAfter: (string | undefined)[] = []): Row[] {
  const byId = new Map<string, Item>();
  const tasks = new Set<string>();
  for (const i of items) {
    byId.set(i.id, i);
    if (i.type === "message:sub:out") tasks.add(i.uuid);
  }
  const hidden = new Set<string>();
  for (const i of items) {
    if (i.type !== "tool:Agent" || i.role !== "use" || !tasks.has(i.uuid)) continue;
    hidden.add(i.id);
    if (i.result_item !== undefined) hidden.add(i.result_item);
  }
  const rows: Row[] = [];
  for (const item of items) {
    if (hidden.has(item.id)) continue;
    if (item.role === "result" && item.parent_item !== undefined && byId.has(item.parent_item))
      continue;
    const result =
      item.role === "use" && item.result_item !== undefined
        ? byId.get(item.result_item)
        : undefined;
    rows.push({ kind: "item", item, result });
    if (gapsAfter.includes(item.id))
      rows.push({ kind: "gap", id: `gap:${item.id}`, after: item.id });
  }
  return rows;
}

/** The topic's list as last taken: its first id, its length, the list. */
export interface Seen {
  first?: string;
  length: number;
  list?: Item[];
}

/**
 * Take a new value of the `transcript_items` topic into what the timeline
 * shows (`live`). An append (same first item, longer) adds its new items; a
 * new snapshot (after a reconnect) is joined where its first item is already
 * shown, or — when it does not overlap — after a gap (`gapAfter`: the last
 * item shown before it). Nothing shown is dropped.
 */
export function joinLive(
  state: { live: Item[]; seen: Seen },
  list: Item[],
): { live: Item[]; seen: Seen; gapAfter?: string } {
  const { live, seen } = state;
  if (list === seen.list) return { live, seen };
  const now: Seen = { first: list[0]?.id, length: list.length, list };
  if (seen.list !== undefined && list[0]?.id === seen.first && list.length >= seen.length)
    return {
      live: list.length > seen.length ? live.concat(list.slice(seen.length)) : live,
      seen: now,
    };
  if (list.length === 0) return { live, seen: now };
  if (live.length === 0) return { live: list.slice(), seen: now };
  const at = live.findIndex((i) => i.id === list[0]!.id);
  if (at >= 0) return { live: live.slice(0, at).concat(list), seen: now };
  return { live: live.concat(list), seen: now, gapAfter: live[live.length - 1]!.id };
}
