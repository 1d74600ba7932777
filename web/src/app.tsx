import { useState } from "preact/hooks";
import { wire } from "./app-state.js";
import { addDevice, person, signOut } from "./conn/person.js";
import { pendingCount } from "./lib/attention.js";
import { unread } from "./lib/notifications.js";
import { href, type Route, route } from "./lib/router.js";
import { setTheme, type Theme, theme } from "./settings.js";
import { ConnectionBadge, SignedOutBanner } from "./ui/connection.js";
import { AttentionView } from "./views/attention.js";
import { BoardView } from "./views/board.js";
import { KvView } from "./views/kv.js";
import { NotificationsView } from "./views/notifications.js";
import { ReservationsView } from "./views/reservations.js";
import { SearchView } from "./views/search.js";
import { SessionView } from "./views/session.js";
import { SessionsView } from "./views/sessions.js";
import { RegisterPage, SignInPage } from "./views/sign-in.js";

/** A registration URL's token (`#register=<token>`), read once at load. */
function registrationToken(): string | undefined {
  const m = /^#register=([A-Za-z0-9_.-]+)$/.exec(location.hash);
  return m?.[1];
}

const NAV: { label: string; to: Route; match: Route["view"][] }[] = [
  { label: "Sessions", to: { view: "sessions" }, match: ["sessions", "session"] },
  { label: "Needs you", to: { view: "attention" }, match: ["attention"] },
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
  const waiting = pendingCount.value;
  const [token, setToken] = useState(registrationToken);
  const who = person.value;
  const [added, setAdded] = useState<{ url: string; code: string } | undefined>(undefined);
  if (token !== undefined)
    return (
      <main id="main" tabIndex={-1}>
        <RegisterPage
          token={token}
          done={() => {
            setToken(undefined);
            history.replaceState(null, "", "#/");
          }}
        />
      </main>
    );
  const signedOut = wire.state.value === "signed_out";
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
                  {item.label === "Needs you" && waiting > 0 && (
                    <span class="nav-count attention-count" data-attention-count={waiting}>
                      <span class="visually-hidden">, waiting: </span>
                      {waiting}
                    </span>
                  )}
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
          {who !== undefined && (
            <>
              <span class="signed-in-as" data-person={who.sub}>
                {who.sub}
              </span>
              <button
                type="button"
                class="link-button"
                onClick={() =>
                  void addDevice().then(
                    (a) => setAdded(a),
                    () => setAdded(undefined),
                  )
                }
              >
                Add a device
              </button>
              <button
                type="button"
                class="link-button"
                data-sign-out
                onClick={() => void signOut().then(() => wire.retryNow())}
              >
                Sign out
              </button>
            </>
          )}
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
      {added !== undefined && (
        <div class="banner" role="status" data-added-device>
          Open <code>{added.url}</code> on the other device (10 minutes, once) and enter the code{" "}
          <strong>{added.code}</strong>.{" "}
          <button type="button" class="link-button" onClick={() => setAdded(undefined)}>
            Done
          </button>
        </div>
      )}
      <main id="main" tabIndex={-1}>
        {signedOut && <SignInPage />}
        {r.view === "sessions" && <SessionsView />}
        {r.view === "session" && <SessionView key={r.sid} sid={r.sid} />}
        {r.view === "board" && <BoardView />}
        {r.view === "attention" && <AttentionView />}
        {r.view === "notifications" && <NotificationsView />}
        {r.view === "reservations" && <ReservationsView />}
        {r.view === "kv" && <KvView ns={r.ns} />}
        {r.view === "search" && <SearchView q={r.q} sid={r.sid} since={r.since} />}
      </main>
    </>
  );
}
