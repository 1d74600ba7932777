import { computed, signal } from "@preact/signals";
import { useState } from "preact/hooks";
import { wire } from "../app-state.js";
import { unreadBySid } from "../lib/notifications.js";
import { href } from "../lib/router.js";
import {
  labelOf,
  matches,
  rows,
  SECTIONS,
  type SectionKey,
  type SessionRow,
  sessionsLoaded,
  sessionsStale,
} from "../lib/sessions.js";
import { ago, now } from "../lib/time.js";
import { togglePin } from "../settings.js";
import { Badge, BusyMark, describeError, ErrorText, StaleNote, Time } from "../ui/common.js";

/** Kept across views: coming back finds the same filter. */
const query = signal("");
const pinnedOnly = signal(false);

interface Group {
  repo: string;
  worktrees: { ws: string; rows: SessionRow[] }[];
}

/** Rows of a section grouped by repository, then worktree: pinned first,
 * then the most recently active. */
function grouped(list: SessionRow[]): Group[] {
  const byRepo = new Map<string, Map<string, SessionRow[]>>();
  for (const r of list) {
    const repo = r.repo || "(no repository)";
    const wss = byRepo.get(repo) ?? new Map<string, SessionRow[]>();
    byRepo.set(repo, wss);
    const ws = r.ws || "(no worktree)";
    const l = wss.get(ws) ?? [];
    wss.set(ws, l);
    l.push(r);
  }
  const order = (a: SessionRow, b: SessionRow) =>
    Number(b.pinned) - Number(a.pinned) || (b.lastActivity ?? 0) - (a.lastActivity ?? 0);
  const newest = (l: SessionRow[]) =>
    Math.max(...l.map((r) => (r.pinned ? Number.MAX_SAFE_INTEGER : (r.lastActivity ?? 0))));
  return [...byRepo.entries()]
    .map(([repo, wss]) => ({
      repo,
      worktrees: [...wss.entries()]
        .map(([ws, l]) => ({ ws, rows: l.sort(order) }))
        .sort((a, b) => newest(b.rows) - newest(a.rows)),
    }))
    .sort(
      (a, b) =>
        newest(b.worktrees.flatMap((w) => w.rows)) - newest(a.worktrees.flatMap((w) => w.rows)),
    );
}

const visible = computed(() => {
  const q = query.value;
  const only = pinnedOnly.value;
  const bySection = new Map<SectionKey, SessionRow[]>();
  for (const s of SECTIONS) bySection.set(s.key, []);
  for (const r of rows.value) {
    if (only && !r.pinned) continue;
    if (!matches(r, q)) continue;
    bySection.get(r.section)!.push(r);
  }
  return bySection;
});

export function SessionsView() {
  const sections = visible.value;
  const total = rows.value.length;
  const shown = [...sections.values()].reduce((n, l) => n + l.length, 0);
  return (
    <div class="view sessions-view">
      <div class="view-head">
        <h1>Sessions</h1>
        <p class="counts" aria-live="polite">
          {SECTIONS.map((s) => `${sections.get(s.key)!.length} ${s.label.toLowerCase()}`).join(
            " · ",
          )}
        </p>
      </div>
      <div class="toolbar">
        <label class="search">
          <span class="visually-hidden">Filter sessions</span>
          <input
            type="search"
            placeholder="Filter by title, repository, branch, id…"
            value={query.value}
            onInput={(e) => {
              query.value = (e.target as HTMLInputElement).value;
            }}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={pinnedOnly.value}
            onChange={(e) => {
              pinnedOnly.value = (e.target as HTMLInputElement).checked;
            }}
          />{" "}
          Pinned only
        </label>
      </div>
      <StaleNote stale={sessionsStale.value && sessionsLoaded.value} what="sessions" />
      {!sessionsLoaded.value ? (
        <p class="empty">Waiting for the instance…</p>
      ) : total === 0 ? (
        <p class="empty">
          No sessions yet. A session appears here once its harness runs a ccmsg hook (see the
          README's "With Claude Code in three steps").
        </p>
      ) : shown === 0 ? (
        <p class="empty">Nothing matches the filter.</p>
      ) : null}
      {SECTIONS.map((s) => {
        const list = sections.get(s.key)!;
        if (list.length === 0) return null;
        return (
          <section
            key={s.key}
            class={`session-section section-${s.key}`}
            aria-labelledby={`section-${s.key}`}
            data-section={s.key}
          >
            <h2 id={`section-${s.key}`}>
              {s.label} <span class="count">{list.length}</span> <span class="hint">{s.hint}</span>
            </h2>
            {grouped(list).map((g) => (
              <div class="repo-group" key={g.repo}>
                <h3>{g.repo}</h3>
                {g.worktrees.map((w) => (
                  <div class="ws-group" key={w.ws}>
                    {w.ws !== g.repo && <h4>{w.ws}</h4>}
                    <ul class="session-list">
                      {w.rows.map((r) => (
                        <SessionItem key={r.sid} row={r} />
                      ))}
                    </ul>
                  </div>
                ))}
              </div>
            ))}
          </section>
        );
      })}
    </div>
  );
}

function SessionItem({ row }: { row: SessionRow }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const label = labelOf(row);
  const unread = unreadBySid.value.get(row.sid) ?? 0;
  const at = now.value;
  const lost = row.section === "paused" || row.section === "disappeared";
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await wire.request("session_last_live_remove", { sid: row.sid });
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="session-item" data-sid={row.sid}>
      <div class="session-main">
        <a class="session-title" href={href({ view: "session", sid: row.sid })}>
          {row.pinned && (
            <span class="pin-mark" aria-hidden="true">
              ★{" "}
            </span>
          )}
          {label}
        </a>
        <span class="session-meta">
          <BusyMark sid={row.sid} />
          <span>{row.harness === "unknown" ? "harness unknown" : row.harness}</span>
          {row.branch !== undefined && <span class="branch">⎇ {row.branch}</span>}
          {lost && row.lastLive !== undefined ? (
            <span>
              last live <Time at={row.lastLive}>{ago(row.lastLive, at)}</Time>
            </span>
          ) : row.lastActivity !== undefined ? (
            <span>
              active <Time at={row.lastActivity}>{ago(row.lastActivity, at)}</Time>
            </span>
          ) : null}
          {row.agent?.waiting_for !== undefined && <span>waits for {row.agent.waiting_for}</span>}
          {row.agentOnly && <span>not greeted</span>}
          <span class="sid">{row.sid.slice(0, 8)}</span>
        </span>
      </div>
      <div class="session-side">
        {row.error !== undefined && (
          <span title={row.error}>
            <Badge tone="bad" label={`stopped on an error: ${row.error.slice(0, 200)}`}>
              error
            </Badge>
          </span>
        )}
        {row.held > 0 && (
          <Badge tone="warn" label={`${row.held} held message${row.held === 1 ? "" : "s"}`}>
            {row.held} held
          </Badge>
        )}
        {unread > 0 && (
          <Badge tone="info" label={`${unread} unread notification${unread === 1 ? "" : "s"}`}>
            {unread} new
          </Badge>
        )}
        <button
          type="button"
          class="icon-button"
          aria-pressed={row.pinned}
          aria-label={`${row.pinned ? "Unpin" : "Pin"} ${label}`}
          title={row.pinned ? "Unpin" : "Pin"}
          onClick={() => togglePin(row.sid).catch((e) => setError(describeError(e)))}
        >
          {row.pinned ? "★" : "☆"}
        </button>
        {lost && (
          <button
            type="button"
            class="small"
            disabled={busy}
            aria-label={`Remove ${label} from the list`}
            onClick={remove}
          >
            Remove
          </button>
        )}
      </div>
      <ErrorText error={error} />
    </li>
  );
}
