import { computed, signal } from "@preact/signals";
import type { Notification as Notice } from "../../../src/contract/messaging.js";
import { wire } from "../app-state.js";
import { rowsBySid } from "./sessions.js";

/**
 * The `notify` feed (an event topic: nothing is kept by the instance, so the
 * console keeps what arrived while it was open — a reload starts empty).
 *
 * "Needs a decision": the contract's notification carries no such flag, so
 * the console marks a line that asks for one — the session it is about is
 * waiting for a person, or the line asks a question or names a decision,
 * an approval or a permission. The mark is a reading aid; every line is shown.
 */
export interface FeedItem {
  id: number;
  n: Notice;
  decision: boolean;
  read: boolean;
}

const MAX_KEPT = 500;
const ASKS = /\?\s*$|\b(decide|decision|approve|approval|permission|confirm|choose|which one)\b/i;

export const feed = signal<FeedItem[]>([]);
export const unread = computed(() => feed.value.filter((f) => !f.read).length);
export const unreadBySid = computed(() => {
  const map = new Map<string, number>();
  for (const f of feed.value) if (!f.read) map.set(f.n.sid, (map.get(f.n.sid) ?? 0) + 1);
  return map;
});

/** Browser notifications: `default` until the person answers the prompt. */
export const permission = signal<NotificationPermission | "unsupported">(
  typeof Notification === "undefined" ? "unsupported" : Notification.permission,
);

let nextId = 1;

export function needsDecision(n: Notice): boolean {
  return rowsBySid.peek().get(n.sid)?.section === "waiting" || ASKS.test(n.text);
}

function arrived(n: Notice): void {
  const item: FeedItem = { id: nextId++, n, decision: needsDecision(n), read: false };
  feed.value = [item, ...feed.value].slice(0, MAX_KEPT);
  if (permission.peek() === "granted" && document.visibilityState !== "visible") {
    try {
      const shown = new Notification(
        item.decision ? `Needs a decision: ${n.sid_label}` : n.sid_label,
        {
          body: n.text.slice(0, 300),
          tag: `ccmsg-${n.sid}`,
        },
      );
      shown.onclick = () => {
        focus();
        location.hash = `#/session/${n.sid}`;
      };
    } catch {}
  }
}

wire.listen("notify", (frame) => arrived(frame.data as Notice));

export function markRead(ids?: ReadonlySet<number>): void {
  feed.value = feed.value.map((f) =>
    ids === undefined || ids.has(f.id) ? { ...f, read: true } : f,
  );
}

export function markSessionRead(sid: string): void {
  if (!feed.peek().some((f) => f.n.sid === sid && !f.read)) return;
  feed.value = feed.value.map((f) => (f.n.sid === sid ? { ...f, read: true } : f));
}

export async function askPermission(): Promise<void> {
  if (typeof Notification === "undefined") return;
  permission.value = await Notification.requestPermission();
}
