import { useEffect } from "preact/hooks";
import {
  askPermission,
  type FeedItem,
  feed,
  loadError,
  markRead,
  permission,
} from "../lib/notifications.js";
import { href } from "../lib/router.js";
import { ago, now } from "../lib/time.js";
import { Badge, ErrorText, Time } from "../ui/common.js";

export function NotificationsView() {
  const items = feed.value;
  // Opening the feed reads it: what is on screen counts as seen when the
  // person leaves.
  useEffect(() => () => markRead(), []);
  const perm = permission.value;
  return (
    <div class="view notifications-view">
      <div class="view-head">
        <h1>Notifications</h1>
        <div class="head-actions">
          {perm === "default" && (
            <button type="button" onClick={() => void askPermission()}>
              Show browser notifications
            </button>
          )}
          {perm === "denied" && (
            <p class="hint">Browser notifications are blocked for this page.</p>
          )}
          {perm === "granted" && (
            <p class="hint">Browser notifications on while this tab is hidden.</p>
          )}
          <button type="button" onClick={() => markRead()} disabled={!items.some((i) => !i.read)}>
            Mark all read
          </button>
        </div>
      </div>
      <ErrorText error={loadError.value} />
      {items.length === 0 ? (
        <p class="empty">
          Nothing yet. What sessions tell you (<code>ccmsg notify</code>, and their answers to your
          messages) is kept here for 7 days, whether or not this page was open.
        </p>
      ) : (
        <FeedList items={items} label="Notifications, newest first" />
      )}
    </div>
  );
}

/** Notifications as a list: the session, when, the text, what it answers,
 * and a way to mark one read. */
export function FeedList({
  items,
  label,
  session = true,
}: {
  items: FeedItem[];
  label: string;
  session?: boolean;
}) {
  const at = now.value;
  return (
    <ol class="feed" aria-label={label}>
      {items.map((f) => (
        <li
          key={f.id}
          data-notification={f.id}
          class={`feed-item${f.read ? "" : " unread"}${f.decision ? " decision" : ""}`}
        >
          <div class="feed-head">
            {!f.read && <Badge tone="info">new</Badge>}
            {f.decision && <Badge tone="warn">needs a decision</Badge>}
            {session && <a href={href({ view: "session", sid: f.n.sid })}>{f.n.sid_label}</a>}
            <Time at={f.n.sent_at}>{ago(f.n.sent_at, at)}</Time>
            {!f.read && f.id > 0 && (
              <button
                type="button"
                class="link-button"
                onClick={() => markRead(new Set([f.id]))}
                aria-label={`Mark read: ${f.n.text.slice(0, 40)}`}
              >
                Mark read
              </button>
            )}
          </div>
          {f.reply_to !== undefined && <Answers item={f} />}
          <p class="feed-text">{f.n.text}</p>
        </li>
      ))}
    </ol>
  );
}

/** What a reply answers: the start of the person's message when the
 * instance still had it, and its mid. */
function Answers({ item }: { item: FeedItem }) {
  return (
    <div class="feed-answers" data-answers={item.reply_to}>
      <span class="hint">
        answers your message <code>{item.reply_to}</code> to{" "}
        <a href={href({ view: "session", sid: item.n.sid })}>{item.n.sid_label}</a>
      </span>
      {item.quote !== undefined && <blockquote class="feed-quote">{item.quote}</blockquote>}
    </div>
  );
}
