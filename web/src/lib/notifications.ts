import { computed, effect, signal } from "@preact/signals";
import type { Notification as Notice } from "../../../src/contract/messaging.js";
import type { StoredNotification } from "../../../src/contract/notifications.js";
import { wire } from "../app-state.js";
import { rowsBySid } from "./sessions.js";

/**
 * The person's inbox (DR-0056). The instance keeps every notification with
 * its read mark, so the feed is what it holds: read on every (re)greeting,
 * and again after each live `notify` event (the event's shape is
 * generation 3's and carries no id, so the stored row is read back). What a
 * live event says shows at once, before that read answers.
 *
 * "Needs a decision": the contract's notification carries no such flag, so
 * the console marks a line that asks for one — the session it is about is
 * waiting for a person, or the line asks a question or names a decision,
 * an approval or a permission. The mark is a reading aid; every line is shown.
 */
export interface FeedItem {
  /** The instance's id; negative for a live line not read back yet. */
  id: number;
  n: Notice;
  decision: boolean;
  read: boolean;
  /** The message it answers, and the start of its text when known. */
  reply_to?: string;
  quote?: string;
}

const PAGE = 200;
const ASKS = /\?\s*$|\b(decide|decision|approve|approval|permission|confirm|choose|which one)\b/i;

export const feed = signal<FeedItem[]>([]);
/** The instance's unread count (more may be stored than the feed holds). */
const unreadStored = signal(0);
export const unread = computed(() =>
  Math.max(unreadStored.value, feed.value.filter((f) => !f.read).length),
);
export const unreadBySid = computed(() => {
  const map = new Map<string, number>();
  for (const f of feed.value) if (!f.read) map.set(f.n.sid, (map.get(f.n.sid) ?? 0) + 1);
  return map;
});
/** Why the stored history could not be read, if it could not. */
export const loadError = signal<string | undefined>(undefined);

/** Browser notifications: `default` until the person answers the prompt. */
export const permission = signal<NotificationPermission | "unsupported">(
  typeof Notification === "undefined" ? "unsupported" : Notification.permission,
);

let provisional = -1;

export function needsDecision(n: Notice): boolean {
  return rowsBySid.peek().get(n.sid)?.section === "waiting" || ASKS.test(n.text);
}

/** A stored notification as the feed shows it. */
export function itemOf(s: StoredNotification): FeedItem {
  const n: Notice = { sid: s.sid, sid_label: s.sid_label, text: s.text, sent_at: s.sent_at };
  const item: FeedItem = { id: s.id, n, decision: needsDecision(n), read: s.read_at !== undefined };
  if (s.reply_to !== undefined) item.reply_to = s.reply_to;
  if (s.quote !== undefined) item.quote = s.quote;
  return item;
}

let loading: Promise<void> | undefined;
let again = false;

/** Read the newest page from the instance; one read at a time, and one more
 * after it when asked meanwhile. */
export function load(): Promise<void> {
  if (loading !== undefined) {
    again = true;
    return loading;
  }
  loading = wire
    .request("notifications_read", { limit: PAGE })
    .then(
      (page) => {
        loadError.value = undefined;
        unreadStored.value = page.unread;
        feed.value = page.notifications.map(itemOf);
      },
      (e: Error) => {
        loadError.value = e.message;
      },
    )
    .finally(() => {
      loading = undefined;
      if (again) {
        again = false;
        void load();
      }
    });
  return loading;
}

function arrived(n: Notice): void {
  const item: FeedItem = { id: provisional--, n, decision: needsDecision(n), read: false };
  feed.value = [item, ...feed.value];
  void load();
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
effect(() => {
  wire.generation.value;
  if (wire.state.value === "open") void load();
});

/** Mark read, here at once and on the instance: `ids`, or every one. */
export function markRead(ids?: ReadonlySet<number>): void {
  const marking = feed.peek().filter((f) => !f.read && (ids === undefined || ids.has(f.id)));
  if (marking.length === 0 && ids !== undefined) return;
  feed.value = feed.value.map((f) =>
    ids === undefined || ids.has(f.id) ? { ...f, read: true } : f,
  );
  const stored = marking.map((f) => f.id).filter((id) => id > 0);
  const args = ids === undefined ? { all: true as const } : { ids: stored };
  if (ids !== undefined && stored.length === 0) return;
  if (ids === undefined && unreadStored.peek() === 0 && marking.length === 0) return;
  unreadStored.value = ids === undefined ? 0 : Math.max(0, unreadStored.peek() - stored.length);
  wire.request("notifications_mark_read", args).then(
    (r) => {
      unreadStored.value = r.unread;
    },
    () => void load(),
  );
}

/** A session's page was opened: its notifications are read. */
export function markSessionRead(sid: string): void {
  if (!feed.peek().some((f) => f.n.sid === sid && !f.read)) return;
  feed.value = feed.value.map((f) => (f.n.sid === sid ? { ...f, read: true } : f));
  wire.request("notifications_mark_read", { all: true, sid }).then(
    (r) => {
      unreadStored.value = r.unread;
    },
    () => void load(),
  );
}

export async function askPermission(): Promise<void> {
  if (typeof Notification === "undefined") return;
  permission.value = await Notification.requestPermission();
}
