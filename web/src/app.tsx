import { wire } from "./app-state.js";
import { unread } from "./lib/notifications.js";
import { href, type Route, route } from "./lib/router.js";
import { setTheme, type Theme, theme } from "./settings.js";
import { ConnectionBadge, SignedOutBanner } from "./ui/connection.js";
import { BoardView } from "./views/board.js";
import { KvView } from "./views/kv.js";
import { NotificationsView } from "./views/notifications.js";
import { ReservationsView } from "./views/reservations.js";
import { SearchView } from "./views/search.js";
import { SessionView } from "./views/session.js";
import { SessionsView } from "./views/sessions.js";

const NAV: { label: string; to: Route; match: Route["view"][] }[] = [
  { label: "Sessions", to: { view: "sessions" }, match: ["sessions", "session"] },
  { label: "Board", to: { view: "board" }, match: ["board"] },
  { label: "Notifications", to: { view: "notifications" }, match: ["notifications"] },
  { label: "Reservations", to: { view: "reservations" }, match: ["reservations"] },
  { label: "KV", to: { view: "kv" }, match: ["kv"] },
  { label: "Search", to: { view: "search" }, match: ["search"] },
];

/** "/" focuses the page's filter or first text field, unless typing already. */
addEventListener("keydown", (e) => {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target as HTMLElement | null;
  if (t !== null && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const field = document.querySelector<HTMLElement>(
    'main input[type="search"], main input[type="text"], main textarea',
  );
  if (field === null) return;
  e.preventDefault();
  field.focus();
});

export function App() {
  const r = route.value;
  const n = unread.value;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          ccmsg
        </a>
        <nav aria-label="Views">
          <ul>
            {NAV.map((item) => (
              <li key={item.label}>
                <a
                  href={href(item.to)}
                  aria-current={item.match.includes(r.view) ? "page" : undefined}
                >
                  {item.label}
                  {item.label === "Notifications" && n > 0 && (
                    <span class="nav-count">
                      <span class="visually-hidden">, unread: </span>
                      {n}
                    </span>
                  )}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="top-right">
          <ConnectionBadge />
          <label class="theme-pick">
            <span class="visually-hidden">Theme</span>
            <select
              value={theme.value}
              disabled={wire.state.value !== "open"}
              onChange={(e) => void setTheme((e.target as HTMLSelectElement).value as Theme)}
            >
              <option value="system">System theme</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
        </div>
      </header>
      <SignedOutBanner />
      <main id="main" tabIndex={-1}>
        {r.view === "sessions" && <SessionsView />}
        {r.view === "session" && <SessionView key={r.sid} sid={r.sid} />}
        {r.view === "board" && <BoardView />}
        {r.view === "notifications" && <NotificationsView />}
        {r.view === "reservations" && <ReservationsView />}
        {r.view === "kv" && <KvView ns={r.ns} />}
        {r.view === "search" && <SearchView q={r.q} sid={r.sid} since={r.since} />}
      </main>
    </>
  );
}
