import { type ReadonlySignal, useComputed } from "@preact/signals";
import { topics } from "../app-state.js";
import { useTopic } from "../conn/topics.js";
import type { Receipt } from "./message-status.js";

// What became of a message, for the timeline's Message in / Message out rows:
// the `receipts` extension topic (DR-0054; a person holds every message's,
// keyed by mid) where the instance offers it, else only what
// the send's own answer said (the item's `delivered` / `reason`, DR-0057).
// Nothing here fails loudly: without the topic a row simply says less.

/** A person holds every message's receipts (DR-0054). */
const TOPIC = "receipts";

/** Receipts by mid, per topic value (one map however many rows read it). */
const maps = new WeakMap<object, Map<string, Receipt>>();

function byMid(value: unknown): Map<string, Receipt> | undefined {
  const list = (value as { receipts?: unknown } | undefined)?.receipts;
  if (!Array.isArray(list)) return undefined;
  let map = maps.get(list);
  if (map === undefined) {
    map = new Map();
    for (const r of list as Receipt[])
      if (typeof r?.mid === "string" && typeof r.state === "string") map.set(r.mid, r);
    maps.set(list, map);
  }
  return map;
}

/** The receipt of `mid` while the component shows it: the topic is held for
 * as long as one is shown (refused or not offered: none, silently). */
export function useReceipt(mid: string | undefined): ReadonlySignal<Receipt | undefined> {
  const state = useTopic<{ receipts: Receipt[] }>(topics, mid === undefined ? undefined : TOPIC);
  return useComputed(() => (mid === undefined ? undefined : byMid(state?.value.value)?.get(mid)));
}

export { messageStatus, type Receipt } from "./message-status.js";
