import { useEffect } from "preact/hooks";
import { askPermission, feed, markRead, permission } from "../lib/notifications.js";
import { href } from "../lib/router.js";
import { ago, now } from "../lib/time.js";
import { Badge, Time } from "../ui/common.js";

export function NotificationsView() {
  const items = feed.value;
  const at = now.value;
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
      {items.length === 0 ? (
        <p class="empty">
          Nothing yet. A session's <code>ccmsg notify</code> shows up here while this page is open
          (the instance keeps no history of them).
        </p>
      ) : (
        <ol class="feed" aria-label="Notifications, newest first">
          {items.map((f) => (
            <li
              key={f.id}
              class={`feed-item${f.read ? "" : " unread"}${f.decision ? " decision" : ""}`}
            >
              <div class="feed-head">
                {!f.read && <Badge tone="info">new</Badge>}
                {f.decision && <Badge tone="warn">needs a decision</Badge>}
                <a href={href({ view: "session", sid: f.n.sid })}>{f.n.sid_label}</a>
                <Time at={f.n.sent_at}>{ago(f.n.sent_at, at)}</Time>
              </div>
              <p class="feed-text">{f.n.text}</p>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
