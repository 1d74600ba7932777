import { useComputed, useSignal, useSignalEffect } from "@preact/signals";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { AttentionItem } from "../../../src/contract/attention.js";
import type { HudStatus, SessionControl } from "../../../src/contract/ecc/hud.js";
import type { InboxMessage } from "../../../src/contract/messaging.js";
import type { AgentTreeNode, SessionStatusData } from "../../../src/contract/session-status.js";
import { topics, wire } from "../app-state.js";
import { useTopic } from "../conn/topics.js";
import { ApiError, api } from "../lib/api.js";
import { endText, sessionAttention, summary } from "../lib/attention.js";
import { type FeedItem, feed, itemOf, markSessionRead } from "../lib/notifications.js";
import { draftOf, outbox, reasonText, type Sent, send } from "../lib/outbox.js";
import { href } from "../lib/router.js";
import { heldCounts, labelOf, rowsBySid, SECTIONS } from "../lib/sessions.js";
import { ago, clockTime, now } from "../lib/time.js";
import { type ItemRow, type Row, Timeline } from "../lib/timeline.js";
import { withAttention } from "../lib/timeline-rows.js";
import { pins, togglePin } from "../settings.js";
import { Badge, BusyMark, describeError, ErrorText, StaleNote, Time } from "../ui/common.js";
import { HudCard } from "../ui/hud-card.js";
import { TranscriptItemView } from "../ui/transcript-item.js";
import { VirtualList } from "../ui/virtual-list.js";
import { FeedList } from "./notifications.js";

export function SessionView({ sid }: { sid: string }) {
  const row = rowsBySid.value.get(sid);
  const label = row === undefined ? sid.slice(0, 8) : labelOf(row);
  useEffect(() => {
    document.title = `${label} · ccmsg`;
    markSessionRead(sid);
    return () => {
      document.title = "ccmsg console";
    };
  }, [sid, label]);
  const section = SECTIONS.find((s) => s.key === row?.section);
  const pinned = pins.value.has(sid);
  const at = now.value;
  const hud = useHud(sid);
  return (
    <div class="view session-page">
      <div class="session-head">
        <p>
          <a href={href({ view: "sessions" })}>← Sessions</a>
        </p>
        <div class="view-head">
          <h1>{label}</h1>
          {section !== undefined && (
            <Badge
              tone={section.key === "waiting" ? "warn" : section.key === "live" ? "good" : "muted"}
            >
              {section.label}
            </Badge>
          )}
          <BusyMark sid={sid} />
          {row === undefined && <Badge tone="muted">not known to the instance</Badge>}
          <button
            type="button"
            class="icon-button"
            aria-pressed={pinned}
            aria-label={pinned ? "Unpin this session" : "Pin this session"}
            onClick={() => void togglePin(sid).catch(() => {})}
          >
            {pinned ? "★" : "☆"}
          </button>
        </div>
        {row !== undefined && (
          <p class="meta">
            <span>{row.harness}</span>
            <span>
              {row.repo}
              {row.ws !== row.repo && ` / ${row.ws}`}
            </span>
            {row.branch !== undefined && <span>⎇ {row.branch}</span>}
            {row.lastActivity !== undefined && (
              <span>
                {row.connected ? "active" : "last live"}{" "}
                <Time at={row.lastActivity}>{ago(row.lastActivity, at)}</Time>
              </span>
            )}
            {row.agent?.waiting_for !== undefined && <span>waits for {row.agent.waiting_for}</span>}
            <span class="sid">{sid}</span>
            <a href={href({ view: "search", sid })}>Search this session</a>
          </p>
        )}
        <Controls sid={sid} connected={row?.connected ?? false} hud={hud} />
      </div>
      <div class="session-main-col">
        <TimelinePanel sid={sid} />
        <Composer sid={sid} label={label} />
      </div>
      <aside class="session-side-col" aria-label="About this session">
        <LiveStatus sid={sid} />
        <HeldMessages sid={sid} />
        <SessionNotifications sid={sid} />
        <HudPanel hud={hud} />
      </aside>
    </div>
  );
}

// --- timeline ---

function TimelinePanel({ sid }: { sid: string }) {
  const timeline = useMemo(() => new Timeline(sid), [sid]);
  useEffect(() => () => timeline.dispose(), [timeline]);
  const asked = useMemo(() => sessionAttention(sid), [sid]);
  useEffect(() => () => asked.dispose(), [asked]);
  const [following, setFollowing] = useState(true);
  const [jump, setJump] = useState<object | undefined>(undefined);
  // Which runs of harness notes are open, by run id: kept here, not in the
  // row, so a run scrolled out of view and back stays as it was left.
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const rows = withAttention(timeline.rows.value, asked.items.value);
  const count = timeline.count.value;
  const error = timeline.topic.error.value;
  const stale = timeline.topic.stale.value;
  const loaded = timeline.topic.value.value !== undefined;
  const lastSeen = useRef(rows.length);
  if (following) lastSeen.current = rows.length;
  const unseen = rows.length - lastSeen.current;
  return (
    <section class="panel timeline-panel" aria-labelledby="timeline-h">
      <h2 id="timeline-h">Timeline</h2>
      {error !== undefined && !loaded ? (
        <p class="empty">
          No timeline:{" "}
          {error.code === "not_found"
            ? "no transcript was found for this session"
            : `${error.code}: ${error.message}`}
        </p>
      ) : (
        <>
          <StaleNote stale={stale && loaded} what="timeline" />
          <div class="follow">
            <span aria-live="polite">
              {!loaded
                ? "Loading…"
                : `${count} item${count === 1 ? "" : "s"}${timeline.loading.value ? ", reading earlier items…" : ""}`}
            </span>
            {!following && (
              <button type="button" class="small" onClick={() => setJump({})}>
                Jump to latest{unseen > 0 ? ` (${unseen} new)` : ""}
              </button>
            )}
          </div>
          <ErrorText error={timeline.historyError.value} />
          <VirtualList<Row>
            class="timeline"
            label="Transcript timeline"
            items={rows}
            keyOf={keyOfRow}
            follow
            jump={jump}
            onFollowChange={setFollowing}
            render={(r) =>
              r.kind === "attention" ? (
                <AttentionRow item={r.item} />
              ) : r.kind === "item" ? (
                <TranscriptItemView item={r.item} result={r.result} />
              ) : r.kind === "notes" ? (
                <HarnessNotes
                  id={r.id}
                  rows={r.rows}
                  open={open.has(r.id)}
                  onToggle={() => toggle(r.id)}
                />
              ) : r.after === "" ? (
                <p class="titem gap">
                  The {timeline.dropped.value.toLocaleString()} oldest items are not kept on this
                  page (reload it to read from the start).
                </p>
              ) : r.after === timeline.liveGap.value ? (
                <p class="titem gap">
                  Items written while the connection was lost are not shown here.
                </p>
              ) : (
                <p class="titem gap">
                  Earlier items are not loaded.{" "}
                  <button type="button" class="small" onClick={() => void timeline.fill(true)}>
                    Load more
                  </button>
                </p>
              )
            }
          />
        </>
      )}
    </section>
  );
}

/** What the session asked the person, and how it ended (or a link to
 * answer it while it waits). */
function AttentionRow({ item }: { item: AttentionItem }) {
  return (
    <div class="titem attention" data-attention={item.id} data-end={item.end ?? "pending"}>
      <div class="hint">
        <Time at={item.asked_at}>{clockTime(item.asked_at)}</Time>{" "}
        {item.kind === "question" ? "asked you a question" : `asked to run ${item.tool}`}
      </div>
      <p class="att-summary mono">{summary(item, 300)}</p>
      {item.end === undefined ? (
        <p>
          <Badge tone="warn">waiting for you</Badge>{" "}
          <a href={href({ view: "attention" })}>Answer it</a>
        </p>
      ) : (
        <p>
          <Badge tone={item.end === "allowed" ? "good" : item.end === "denied" ? "bad" : "muted"}>
            {endText(item)}
          </Badge>
          {item.ended_at !== undefined && (
            <>
              {" "}
              <Time at={item.ended_at}>{clockTime(item.ended_at)}</Time>
            </>
          )}
          {item.message !== undefined && <span class="hint"> — “{item.message}”</span>}
          {item.answers !== undefined && (
            <span class="hint">
              {" "}
              —{" "}
              {Object.entries(item.answers)
                .map(([q, a]) => `${q} → ${a}`)
                .join("; ")}
            </span>
          )}
        </p>
      )}
    </div>
  );
}

function keyOfRow(r: Row): string {
  return r.kind === "item" ? r.item.id : r.id;
}

/** A run of the harness's notes to itself (timeline-rows.ts `isHarnessNote`),
 * one line until opened: what it is, and how many. */
function HarnessNotes(props: {
  id: string;
  rows: readonly ItemRow[];
  open: boolean;
  onToggle(): void;
}) {
  const { rows, open } = props;
  const n = rows.length;
  const kinds = [...new Set(rows.map((r) => noteKind(r.item.type)))];
  const body = `${props.id}-items`;
  return (
    <div class="titem notes" data-notes={n}>
      <button
        type="button"
        class="notes-toggle"
        aria-expanded={open}
        aria-controls={open ? body : undefined}
        onClick={props.onToggle}
      >
        <span aria-hidden="true">{open ? "▾" : "▸"} </span>
        {n} harness note{n === 1 ? "" : "s"}
      </button>
      <span class="hint notes-kinds">
        {kinds.slice(0, 4).join(", ")}
        {kinds.length > 4 ? ", …" : ""}
      </span>
      {open && (
        <div class="notes-items" id={body}>
          {rows.map((r) => (
            <TranscriptItemView key={r.item.id} item={r.item} result={r.result} />
          ))}
        </div>
      )}
    </div>
  );
}

/** A note's kind in a few words: an attachment's kind, a hook's event. */
function noteKind(type: string): string {
  if (type.startsWith("system:attachment:")) return type.slice(18).replaceAll("_", " ");
  if (type.startsWith("hook:")) return `${type.slice(5)} hook`;
  return type === "system:caveat" ? "caveat" : "unplaced record";
}

// --- composer ---

function Composer({ sid, label }: { sid: string; label: string }) {
  const draft = draftOf(sid);
  const sent = outbox.value[sid] ?? [];
  const open = wire.state.value === "open";
  const text = draft.value;
  const submit = (e: Event) => {
    e.preventDefault();
    if (!open || text.trim() === "") return;
    void send(sid, text);
  };
  return (
    <section class="panel composer" aria-labelledby="composer-h">
      <h2 id="composer-h">Message {label}</h2>
      <form onSubmit={submit}>
        <div class="composer-row">
          <label class="visually-hidden" for="composer-text">
            Message to {label}
          </label>
          <textarea
            id="composer-text"
            value={text}
            placeholder="Write to this session as yourself (Ctrl+Enter sends)"
            onInput={(e) => {
              draft.value = (e.target as HTMLTextAreaElement).value;
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
            }}
          />
          <button type="submit" class="primary" disabled={!open || text.trim() === ""}>
            Send
          </button>
        </div>
        {!open && (
          <p class="hint">
            Not connected: your text is kept and can be sent once the instance answers.
          </p>
        )}
      </form>
      {sent.length > 0 && (
        <ol class="sent-list" aria-label="Sent from here">
          {[...sent].reverse().map((s) => (
            <SentItem key={s.id} sent={s} />
          ))}
        </ol>
      )}
    </section>
  );
}

function SentItem({ sent }: { sent: Sent }) {
  const st = sent.state;
  return (
    <li data-delivery={st.kind}>
      <span class="sent-text">{sent.text}</span>
      <span>
        <time dateTime={new Date(sent.at).toISOString()}>{clockTime(sent.at)}</time>{" "}
        {st.kind === "sending" && <Badge tone="muted">sending…</Badge>}
        {st.kind === "delivered" && (
          <>
            <Badge tone="good">delivered as a message</Badge>{" "}
            <span class="hint">Claude Code shows it as from another session</span>
          </>
        )}
        {st.kind === "typed" && (
          <>
            <Badge tone={st.confirmed ? "good" : "warn"}>typed into the session as you</Badge>
            {!st.confirmed && <span class="hint"> not yet seen in its transcript</span>}
          </>
        )}
        {st.kind === "held" && (
          <>
            <Badge tone="warn">held: {st.reason}</Badge>{" "}
            <span class="hint">{reasonText(st.reason)}</span>
            {st.candidates.length > 0 && (
              <span class="hint">
                {" "}
                Live in the same repository:{" "}
                {st.candidates.map((c) => (
                  <a key={c.sid} href={href({ view: "session", sid: c.sid })}>
                    {c.ws ?? c.sid.slice(0, 8)}{" "}
                  </a>
                ))}
              </span>
            )}
          </>
        )}
        {st.kind === "unknown" && (
          <>
            <Badge tone="bad">outcome unknown</Badge>{" "}
            <span class="hint">{st.why}; look at the held messages before sending again</span>
          </>
        )}
        {st.kind === "refused" && (
          <Badge tone="bad">
            not sent: {st.code} {st.msg}
          </Badge>
        )}
      </span>
    </li>
  );
}

// --- live status ---

function LiveStatus({ sid }: { sid: string }) {
  const topic = useTopic<SessionStatusData>(topics, `session_status:${sid}`)!;
  const st = topic.value.value;
  const error = topic.error.value;
  return (
    <section class="panel" aria-labelledby="status-h">
      <h2 id="status-h">Live status</h2>
      {st === undefined ? (
        <p class="hint">
          {error !== undefined ? `${error.code}: ${error.message}` : "Waiting for the instance…"}
        </p>
      ) : (
        <div class={topic.stale.value ? "stale" : undefined}>
          {st.api_error !== undefined && (
            <p class="error-text" role="alert">
              Stopped on an API error ({clockTime(st.api_error.occurred_at)}): {st.api_error.text}
            </p>
          )}
          <dl class="facts">
            <dt>Context</dt>
            <dd>
              {st.context === undefined ? (
                <span class="unknown">unknown</span>
              ) : (
                `${st.context.tokens.toLocaleString()} tokens · ${st.context.model}`
              )}
            </dd>
            <dt>Background</dt>
            <dd>
              {st.background.length === 0
                ? "none"
                : st.background.map((b) => `${b.kind}: ${b.description} (${b.status})`).join("; ")}
            </dd>
          </dl>
          <h3>Todos</h3>
          {st.todos.length === 0 ? (
            <p class="hint">none</p>
          ) : (
            <ul class="todo-list">
              {st.todos.map((t) => (
                <li key={t.id}>
                  <span aria-hidden="true">
                    {t.status === "completed" ? "☑" : t.status === "in_progress" ? "◐" : "☐"}{" "}
                  </span>
                  <span class="visually-hidden">{t.status}: </span>
                  {t.subject}
                </li>
              ))}
            </ul>
          )}
          <h3>Agents</h3>
          {st.agent_tree.agents.length + st.agent_tree.teammates.length === 0 ? (
            <p class="hint">none</p>
          ) : (
            <ul class="agent-tree">
              {[...st.agent_tree.teammates, ...st.agent_tree.agents].map((n) => (
                <AgentNode key={n.agent_id} node={n} />
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}

function AgentNode({ node }: { node: AgentTreeNode }) {
  return (
    <li>
      {node.teammate_name ?? node.description ?? node.agent_type ?? node.agent_id}{" "}
      <span class="hint">({node.state})</span>
      {node.children.length > 0 && (
        <ul>
          {node.children.map((c) => (
            <AgentNode key={c.agent_id} node={c} />
          ))}
        </ul>
      )}
    </li>
  );
}

// --- held messages ---

function HeldMessages({ sid }: { sid: string }) {
  const messages = useSignal<InboxMessage[] | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  const count = useComputed(() => heldCounts.value[sid] ?? 0);
  useSignalEffect(() => {
    count.value;
    wire.generation.value;
    api<{ messages: InboxMessage[] }>("GET", `api/console/held/${sid}`).then(
      (r) => {
        messages.value = r.messages;
        error.value = undefined;
      },
      (e) => {
        error.value = describeError(e);
      },
    );
  });
  const list = messages.value;
  return (
    <section class="panel" aria-labelledby="held-h">
      <h2 id="held-h">
        Held messages <span class="count">{list?.length ?? count.value}</span>
      </h2>
      <ErrorText error={error.value} />
      {list === undefined ? null : list.length === 0 ? (
        <p class="hint">Nothing is waiting for this session.</p>
      ) : (
        <ul class="held-list">
          {list.map((m) => (
            <li key={m.mid}>
              <div class="hint">
                from {m.from_label} · <Time at={m.sent_at}>{clockTime(m.sent_at)}</Time>
              </div>
              <div class="sent-text">{m.text}</div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** What this session told the person (DR-0056), newest first. */
function SessionNotifications({ sid }: { sid: string }) {
  const items = useSignal<FeedItem[] | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  useSignalEffect(() => {
    // Read again whenever the feed changes (a new line, a mark).
    feed.value;
    if (wire.state.value !== "open") return;
    wire.request("notifications_read", { sid, limit: 20 }).then(
      (page) => {
        error.value = undefined;
        items.value = page.notifications.map(itemOf);
      },
      (e) => {
        error.value = describeError(e);
      },
    );
  });
  const list = items.value;
  return (
    <section class="panel session-notifications" aria-labelledby="notes-h">
      <h2 id="notes-h">
        Notifications <span class="count">{list?.length ?? 0}</span>
      </h2>
      <ErrorText error={error.value} />
      {list === undefined ? null : list.length === 0 ? (
        <p class="hint">This session has told you nothing lately.</p>
      ) : (
        <FeedList items={list} label="This session's notifications" session={false} />
      )}
    </section>
  );
}

// --- HUD and controls ---

type HudState = { hud?: HudStatus; error?: string; loading: boolean };

function useHud(sid: string) {
  const state = useSignal<HudState>({ loading: true });
  const load = () => {
    state.value = { ...state.peek(), loading: true };
    api<HudStatus>("GET", `api/console/sessions/${sid}/hud`).then(
      (hud) => {
        state.value = { hud, loading: false };
      },
      (e) => {
        state.value = { error: describeError(e), loading: false };
      },
    );
  };
  useEffect(() => {
    load();
    const t = setInterval(() => {
      if (document.visibilityState === "visible") load();
    }, 30_000);
    return () => clearInterval(t);
  }, [sid]);
  return { state, load };
}

type Hud = ReturnType<typeof useHud>;

function HudPanel({ hud }: { hud: Hud }) {
  const { state, load } = hud;
  const s = state.value;
  return (
    <section class="panel" aria-labelledby="hud-h">
      <h2 id="hud-h">
        HUD{" "}
        <button type="button" class="small" onClick={load} disabled={s.loading}>
          {s.loading ? "Reading…" : "Refresh"}
        </button>
      </h2>
      {s.hud !== undefined ? (
        <HudCard hud={s.hud} />
      ) : s.error !== undefined ? (
        <p class="hint">No HUD: {s.error}</p>
      ) : (
        <p class="hint">Reading…</p>
      )}
    </section>
  );
}

const CONTROLS: { name: SessionControl; label: string }[] = [
  { name: "stop", label: "Stop" },
  { name: "resume", label: "Resume" },
  { name: "diff", label: "Diff" },
];

/** Stop, resume, diff: enabled as the HUD's `sessionControls` say, and
 * otherwise disabled with the reason it gives. */
function Controls({ sid, connected, hud: h }: { sid: string; connected: boolean; hud: Hud }) {
  const hud = h.state.value.hud;
  const [outcome, setOutcome] = useState<string | undefined>(undefined);
  const [diff, setDiff] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState<SessionControl | undefined>(undefined);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (diff !== undefined) dialog.current?.showModal();
  }, [diff]);
  const reasonOf = (name: SessionControl): string | undefined => {
    if (wire.state.value !== "open") return "not connected to the instance";
    if (hud === undefined) return "waiting for the HUD";
    const controls = hud.sessionControls as {
      supported?: string[];
      blocked?: { control: string; reason: string }[];
    } | null;
    if (controls === null || typeof controls !== "object") return "the HUD lists no controls";
    const blocked = controls.blocked?.find((b) => b.control === name);
    if (blocked !== undefined) return blocked.reason;
    if (!(controls.supported ?? []).includes(name)) return "not offered for this session";
    if (name === "stop" && !connected) return "the session is not running";
    if (name === "resume" && connected) return "the session is running";
    return undefined;
  };
  const run = async (name: SessionControl) => {
    setBusy(name);
    setOutcome(undefined);
    try {
      if (name === "stop") {
        if (!confirm("Stop this session? Its harness process is asked to stop.")) return;
        const r = await wire.request("session_kill", { sid });
        setOutcome(r.terminated ? "Stopped." : "Asked to stop; the process is still running.");
      } else if (name === "resume") {
        const r = await api<Record<string, unknown>>(
          "POST",
          `api/console/sessions/${sid}/resume`,
          {},
        );
        setOutcome(
          r.launched === true
            ? "Resumed in a new tmux window."
            : typeof r.command === "string"
              ? `Could not open a window${typeof r.why === "string" ? ` (${r.why})` : ""}; run: ${r.command}`
              : "Resumed.",
        );
      } else {
        const r = await api<{ stat?: string; diff?: string; untracked?: string[] }>(
          "GET",
          `api/console/sessions/${sid}/diff`,
        );
        setDiff(
          [r.stat ?? "", r.diff ?? "", ...(r.untracked ?? []).map((u) => `untracked: ${u}`)]
            .filter((l) => l.trim() !== "")
            .join("\n") || "no changes",
        );
      }
    } catch (e) {
      setOutcome(e instanceof ApiError ? e.message : describeError(e));
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <fieldset class="controls">
      <legend class="visually-hidden">Session controls</legend>
      {CONTROLS.map((c) => {
        const reason = reasonOf(c.name);
        const id = `control-${c.name}-reason`;
        return (
          <div class="control" key={c.name}>
            <button
              type="button"
              disabled={reason !== undefined || busy !== undefined}
              aria-describedby={reason !== undefined ? id : undefined}
              onClick={() => void run(c.name)}
              data-control={c.name}
            >
              {busy === c.name ? `${c.label}…` : c.label}
            </button>
            {reason !== undefined && (
              <span class="reason" id={id}>
                {reason}
              </span>
            )}
          </div>
        );
      })}
      {outcome !== undefined && (
        <p class="hint" role="status">
          {outcome}
        </p>
      )}
      <dialog ref={dialog} aria-label="Diff" onClose={() => setDiff(undefined)}>
        <h2>Diff</h2>
        <pre>{diff}</pre>
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </dialog>
    </fieldset>
  );
}
