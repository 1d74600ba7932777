import { computed, effect } from "@preact/signals";
import type { KvEntry } from "../../src/contract/kv.js";
import { topics, wire } from "./app-state.js";

/**
 * The console's own settings, kept in the instance's key-value store under
 * the namespace `console` (contract §11: the web UI keeps its settings
 * there), so every browser of the owner shares them and they survive a
 * reload: `theme`, `pins` (pinned session ids), `kv_namespaces` (the
 * namespaces the KV browser lists), `owner` (the name a claim uses).
 */
export const CONSOLE_NS = "console";

export type Theme = "system" | "light" | "dark";

const kv = topics.hold<{ entries: KvEntry[] }>(`kv:${CONSOLE_NS}`).state;

const entries = computed(() => {
  const map = new Map<string, unknown>();
  for (const e of kv.value.value?.entries ?? []) if ("value" in e) map.set(e.key, e.value);
  return map;
});

/** Cached in the browser too, so the first paint after a reload already has
 * the chosen theme rather than flashing the system's. */
const THEME_CACHE = "ccmsg-console-theme";

export const theme = computed<Theme>(() => {
  const v = entries.value.get("theme");
  if (v === "light" || v === "dark" || v === "system") return v;
  const cached = localStorage.getItem(THEME_CACHE);
  return cached === "light" || cached === "dark" ? cached : "system";
});

export const pins = computed(() => {
  const v = entries.value.get("pins");
  return new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
});

export const kvNamespaces = computed(() => {
  const v = entries.value.get("kv_namespaces");
  const list = Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  return [...new Set([CONSOLE_NS, ...list])].sort();
});

export const ownerName = computed(() => {
  const v = entries.value.get("owner");
  return typeof v === "string" && v.trim() !== "" ? v : "me";
});

effect(() => {
  const t = theme.value;
  document.documentElement.dataset.theme = t;
  localStorage.setItem(THEME_CACHE, t);
});

export function writeSetting(key: string, value: unknown): Promise<unknown> {
  return wire.request("kv_write", { ns: CONSOLE_NS, key, value });
}

export function setTheme(t: Theme): Promise<unknown> {
  localStorage.setItem(THEME_CACHE, t);
  document.documentElement.dataset.theme = t;
  return writeSetting("theme", t);
}

export function togglePin(sid: string): Promise<unknown> {
  const next = new Set(pins.value);
  if (next.has(sid)) next.delete(sid);
  else next.add(sid);
  return writeSetting("pins", [...next].sort());
}

export function rememberNamespace(ns: string): Promise<unknown> {
  const list = kvNamespaces.value.filter((n) => n !== CONSOLE_NS);
  if (list.includes(ns) || ns === CONSOLE_NS) return Promise.resolve();
  return writeSetting("kv_namespaces", [...list, ns].sort());
}
