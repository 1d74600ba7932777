import { basename } from "node:path";
import {
  CANDIDATES_MAX,
  LAST_LIVE_RETENTION_MS,
  META_PATH_MAX_CHARS,
  PROTOCOL_VERSION,
  TITLE_MAX_CHARS,
} from "../../contract/constants.js";
import type { InstanceId, Sid } from "../../contract/identifiers.js";
import {
  type CandidateSession,
  classify,
  type LastLiveSession,
  lostStateOf,
  type PeerInfo,
  SESSION_META_KEYS,
  type SessionMeta,
} from "../../contract/peers.js";
import type { LastLiveStore } from "../../store/last-live.js";
import type { Clock } from "../../util/clock.js";
import type { Connection } from "../wire/connection.js";

/** What the harness says of one running session (presence.ts reads it from
 * the harness's own files). */
export interface HarnessPresence {
  sid: Sid;
  cwd?: string;
  /** The harness's name for the session; the title when it stated none. */
  name?: string;
  /** Stopped at something a person must answer (a dialog). */
  waiting: boolean;
  /** Reachable without a connection: a messaging socket or a terminal. */
  reachable: boolean;
}

/** What the instance knows of one live session: it holds a connection, or
 * its harness process runs, or both. */
export interface LiveSession {
  sid: Sid;
  /** What the rows show: the stated meta, completed from the harness. */
  meta: SessionMeta;
  /** What the session stated (hello), merged field by field. */
  stated: SessionMeta;
  connections: Set<Connection>;
  /** Its harness process runs, as the last pass over the harness files saw. */
  harness?: HarnessPresence;
  /** What its harness last said of it (kept after the harness row goes, so a
   * lost row keeps the directory it was seen in). */
  harnessMeta: SessionMeta;
  connected_at: number;
  /** The most recent request on any of its connections; absent while it
   * never held one. */
  last_activity_at?: number;
  last_user_input_at?: number;
  /** When a gateway last saw inference run for it (DR-0043). */
  gateway_active_at?: number;
  protocol_version: number;
  client_version?: string;
  /** Held from `session_stopping` until the session is lost — its last
   * connection closed and its process ended. */
  stopped_at?: number;
  /** The newest instant it was known alive without a connection. */
  seen_at?: number;
  /** Lost its last connection with no harness row known: the next pass
   * decides whether it lives on (its process runs) or is lost. */
  awaiting_pass?: boolean;
}

/** How a session's life ended on purpose (ECC's vocabulary). */
export type StopOutcome = "stopped" | "completed";

/** Where a sid stands now. */
export type SessionLookup =
  | { kind: "live"; session: LiveSession }
  | { kind: "lost"; row: LastLiveSession }
  | undefined;

/**
 * The session registry, keyed by sid. A session may hold several connections;
 * it is live while it holds one or while its harness process runs (DR-0025).
 * When it has neither it moves to `last_live`, as `paused` if it declared
 * `session_stopping` (the declaration and the loss are one event, in that
 * order) and `disappeared` otherwise.
 */
export class Sessions {
  private readonly live = new Map<Sid, LiveSession>();
  private readonly lost = new Map<Sid, LastLiveSession>();
  /** First registration per sid since this instance started: `connected_at`
   * stays stable across reconnects and resets with the instance. */
  private readonly firstSeen = new Map<Sid, number>();
  /** Set by a declaration, kept after the loss, dropped when it lives again. */
  private readonly outcomes = new Map<Sid, StopOutcome>();
  private readonly listeners: (() => void)[] = [];
  private changes = 0;
  private lostChanges = 0;
  private readonly lifecycle: ((s: LiveSession | LastLiveSession) => void)[] = [];
  private expiryTimer: NodeJS.Timeout | undefined;
  /** When the expiry timer fires (Infinity: none set). */
  private expiryAt = Number.POSITIVE_INFINITY;
  private closed = false;
  /** Asks for a pass over the harness files (presence.ts), whose answer comes
   * back through `setHarness`. Without one, losing the last connection is
   * losing the session. */
  private askHarness: (() => void) | undefined;

  /**
   * @param persist queues a store write (the instance's group commit), so a
   *   connection closing under another process's write lock never waits for
   *   it, and never fails for it.
   */
  constructor(
    private readonly instanceId: InstanceId,
    private readonly store: LastLiveStore,
    private readonly clock: Clock,
    private readonly persist: (write: () => void) => void,
  ) {
    const now = clock.now();
    store.prune(now, LAST_LIVE_RETENTION_MS);
    // `state` is derived when a row is read out (rows of older builds carry
    // one; it is not trusted).
    for (const { state: _state, ...row } of store.all()) this.lost.set(row.sid, row);
    this.scheduleExpiry();
  }

  /** Called whenever the peers view changed. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Goes up whenever the peers view changed: what a cached view is keyed by. */
  get version(): number {
    return this.changes;
  }

  /** Goes up whenever last_live changed (a subset of `version`). */
  get lastLiveVersion(): number {
    return this.lostChanges;
  }

  /** Called when a session connects (with its live record) and when it is
   * lost (with its last_live row). */
  onLifecycle(listener: (s: LiveSession | LastLiveSession) => void): void {
    this.lifecycle.push(listener);
  }

  private changed(): void {
    this.changes++;
    for (const l of this.listeners) l();
  }

  /** A session greeted on `conn`: register it (leaving last_live), merging the
   * meta field by field — an omitted field never withdraws a stated one. */
  attach(
    conn: Connection,
    sid: Sid,
    meta: SessionMeta,
    protocolVersion: number,
    clientVersion?: string,
  ): void {
    const now = this.clock.now();
    const earlier = this.lost.get(sid);
    if (earlier !== undefined) this.unlose(sid);
    const s = this.live.get(sid) ?? this.register(sid, earlier, now);
    for (const key of SESSION_META_KEYS) {
      const value = meta[key];
      if (value !== undefined) s.stated[key] = value;
    }
    this.refreshMeta(s);
    s.connections.add(conn);
    s.awaiting_pass = undefined;
    s.protocol_version = protocolVersion;
    if (clientVersion !== undefined) s.client_version = clientVersion;
    s.last_activity_at = now;
    for (const l of this.lifecycle) l(s);
    this.changed();
  }

  /** A new live record for `sid`, keeping what it stated before it was lost:
   * an omitted field never withdraws a stated one, across a reconnect too. */
  private register(sid: Sid, earlier: LastLiveSession | undefined, now: number): LiveSession {
    const first = this.firstSeen.get(sid) ?? now;
    this.outcomes.delete(sid);
    this.firstSeen.set(sid, first);
    const s: LiveSession = {
      sid,
      meta: {},
      stated: {},
      harnessMeta: {},
      connections: new Set(),
      connected_at: first,
      protocol_version: PROTOCOL_VERSION,
    };
    if (earlier !== undefined) {
      for (const key of SESSION_META_KEYS) {
        const value = earlier[key];
        if (typeof value === "string" && value !== "") s.stated[key] = value;
      }
    }
    this.live.set(sid, s);
    return s;
  }

  /** The meta rows show: what the session stated, completed by what its
   * harness says (its directory; its name as the title). */
  private refreshMeta(s: LiveSession): void {
    const h = s.harness;
    if (h?.cwd !== undefined && h.cwd.length <= META_PATH_MAX_CHARS) s.harnessMeta.cwd = h.cwd;
    if (h?.name !== undefined && h.name.length <= TITLE_MAX_CHARS) s.harnessMeta.title = h.name;
    s.meta = { ...s.harnessMeta, ...s.stated };
  }

  /** Ask for a pass over the harness files when a session's last connection
   * closes and no harness row is known for it. */
  askHarnessWith(ask: () => void): void {
    this.askHarness = ask;
  }

  /**
   * A pass over the harness files: `rows` are the sessions whose process runs
   * now, `seenAt` when the pass started. A session found that was not live is
   * live again (from last_live too); a live one no longer found is lost once it
   * holds no connection either. `undefined` (the pass failed) finds and loses
   * nothing by the harness, but settles the sessions waiting on a pass as
   * before harness presence: lost.
   */
  setHarness(rows: ReadonlyMap<Sid, HarnessPresence> | undefined, seenAt: number): void {
    if (this.closed) return;
    let changed = false;
    if (rows !== undefined) {
      for (const [sid, h] of rows) {
        let s = this.live.get(sid);
        if (s === undefined) {
          const earlier = this.lost.get(sid);
          if (earlier !== undefined) this.unlose(sid);
          s = this.register(sid, earlier, this.clock.now());
          s.harness = h;
          this.refreshMeta(s);
          for (const l of this.lifecycle) l(s);
          changed = true;
        } else if (!sameHarness(s.harness, h)) {
          s.harness = h;
          this.refreshMeta(s);
          changed = true;
        }
        s.seen_at = Math.max(s.seen_at ?? 0, seenAt);
        if (s.awaiting_pass) s.awaiting_pass = undefined;
      }
    }
    for (const s of [...this.live.values()]) {
      if (rows !== undefined && s.harness !== undefined && !rows.has(s.sid)) {
        s.harness = undefined;
        changed = true;
        if (s.connections.size === 0) this.lose(s);
      } else if (s.awaiting_pass && s.connections.size === 0 && s.harness === undefined) {
        this.lose(s);
      }
    }
    if (changed) this.changed();
  }

  /** Whether `sid` holds a connection now. */
  connected(sid: Sid): boolean {
    return (this.live.get(sid)?.connections.size ?? 0) > 0;
  }

  /** A connection of a session closed. Its last one: the session lives on
   * while its harness process runs; when no harness row is known, a pass over
   * the harness files decides (and the row stays as it was until then). */
  detach(conn: Connection, sid: Sid): void {
    if (this.closed) return;
    const s = this.live.get(sid);
    if (s === undefined || !s.connections.delete(conn) || s.connections.size > 0) return;
    s.seen_at = this.clock.now();
    if (s.harness !== undefined) {
      this.changed();
    } else if (this.askHarness === undefined) {
      this.lose(s);
    } else {
      s.awaiting_pass = true;
      this.askHarness();
    }
  }

  private lose(s: LiveSession): void {
    this.live.delete(s.sid);
    this.record(s, s.seen_at);
  }

  /** A lost session lives again: its last_live row goes. */
  private unlose(sid: Sid): void {
    this.lost.delete(sid);
    this.lostChanges++;
    this.persist(() => this.store.remove(sid));
  }

  /** A sid left last_live for good (removed, or past its retention): what
   * was kept for its return goes with it, so nothing here grows with every
   * session ever seen. */
  private forget(sid: Sid): void {
    this.firstSeen.delete(sid);
    this.outcomes.delete(sid);
  }

  /** The instance is stopping: every session still connected was running
   * until now, so it is recorded in last_live (paused if it declared so), and
   * the registry takes no further changes. */
  close(): void {
    this.closed = true;
    for (const s of this.live.values()) this.record(s);
    this.live.clear();
    this.dispose();
  }

  private record(s: LiveSession, seenAt?: number): void {
    const sid = s.sid;
    const now = this.clock.now();
    const row: LastLiveSession = {
      sid,
      instance: this.instanceId,
      ...this.location(s.meta),
      last_seen_at: seenAt ?? now,
      connected_at: s.connected_at,
    };
    for (const key of [
      "transcript_path",
      "repo_root",
      "branch",
      "title",
      "model",
      "effort",
    ] as const) {
      if (s.meta[key] !== undefined) row[key] = s.meta[key];
    }
    if (s.stopped_at !== undefined) row.stopped_at = s.stopped_at;
    this.lost.set(sid, row);
    this.lostChanges++;
    this.persist(() => this.store.put(row));
    for (const l of this.lifecycle) l(row);
    if (this.closed) return;
    this.expireBy(row.last_seen_at + LAST_LIVE_RETENTION_MS);
    this.changed();
  }

  /** The session declared it is about to stop; held until it is lost (its
   * SessionEnd hook connects, declares and leaves before its process ends).
   * `by: "person"`: a person stops it (`session_kill`); that stays the record
   * even when the session's own SessionEnd declares afterwards. */
  declareStopping(sid: Sid, by: "session" | "person" = "session"): number {
    const now = this.clock.now();
    const s = this.live.get(sid);
    if (s !== undefined) {
      s.stopped_at = now;
      if (by === "person" || !this.outcomes.has(sid))
        this.outcomes.set(sid, by === "person" ? "stopped" : "completed");
    }
    return now;
  }

  /** How the session's last life ended on purpose, for ECC's `sessions`
   * table: `stopped` by a person, `completed` by itself; undefined while it
   * never declared either (DR-0029). */
  outcomeOf(sid: Sid): StopOutcome | undefined {
    return this.outcomes.get(sid);
  }

  /** A request arrived from the session. */
  touch(sid: Sid): void {
    const s = this.live.get(sid);
    if (s !== undefined) {
      s.last_activity_at = this.clock.now();
      this.changed();
    }
  }

  /** A gateway saw inference run for the session at `at`; the row keeps the
   * latest instant (events of one batch may arrive out of order). */
  markGatewayActive(sid: Sid, at: number): void {
    const s = this.live.get(sid);
    if (s === undefined || (s.gateway_active_at ?? -1) >= at) return;
    s.gateway_active_at = at;
    this.changed();
  }

  /** A person put something into the session. */
  markUserInput(sid: Sid): void {
    const s = this.live.get(sid);
    if (s !== undefined) {
      s.last_user_input_at = this.clock.now();
      this.changed();
    }
  }

  lookup(sid: Sid): SessionLookup {
    const s = this.live.get(sid);
    if (s !== undefined) return { kind: "live", session: s };
    const row = this.lost.get(sid);
    if (row !== undefined && !this.expired(row)) return { kind: "lost", row };
    return undefined;
  }

  liveCount(): number {
    return this.live.size;
  }

  /** Remove a last_live row; whether one existed. */
  removeLastLive(sid: Sid): boolean {
    const existed = this.lost.delete(sid);
    this.persist(() => this.store.remove(sid));
    if (existed) {
      this.lostChanges++;
      this.forget(sid);
      this.changed();
    }
    return existed;
  }

  /**
   * How to show a sender: its title, else `repo/ws`, else its sid (contract
   * §5.4 label resolution). A person is `user`.
   */
  label(sid: Sid | "user"): string {
    if (sid === "user") return "user";
    const meta = this.live.get(sid)?.meta ?? this.lost.get(sid);
    if (meta?.title) return meta.title;
    if (meta?.repo && meta.ws) return `${meta.repo}/${meta.ws}`;
    return sid;
  }

  /** Live sessions in the same repository as `sid` (paused/gone addressee),
   * most recently active first, at most CANDIDATES_MAX. */
  candidates(row: LastLiveSession): CandidateSession[] {
    const root = row.repo_root ?? row.cwd;
    if (!root) return [];
    const near = [...this.live.values()].filter(
      (s) => s.sid !== row.sid && (s.meta.repo_root ?? s.meta.cwd) === root,
    );
    near.sort((a, b) => (b.last_activity_at ?? 0) - (a.last_activity_at ?? 0));
    return near.slice(0, CANDIDATES_MAX).map((s) => {
      const c: CandidateSession = { sid: s.sid, instance: this.instanceId };
      const { ws } = this.location(s.meta);
      if (ws) c.ws = ws;
      return c;
    });
  }

  /** The `peers` value of this instance. */
  peers(): { peers: PeerInfo[]; last_live: LastLiveSession[] } {
    const last_live = this.lastLiveRows().map((row) => ({ ...row, state: lostStateOf(row) }));
    return { peers: this.livePeers(), last_live };
  }

  /** The rows of the connected sessions, as `peers.peers` lists them. */
  livePeers(): PeerInfo[] {
    const peers: PeerInfo[] = [];
    for (const s of this.live.values()) {
      const row: PeerInfo = {
        sid: s.sid,
        instance: this.instanceId,
        ...this.location(s.meta),
        state: classify({
          connected: true,
          waiting: s.harness?.waiting === true,
          // One waiting on a pass is shown as it was until the pass decides.
          reachable: s.connections.size > 0 || s.awaiting_pass === true || s.harness?.reachable,
        }),
        connected_at: s.connected_at,
        protocol_version: s.protocol_version,
      };
      if (s.last_activity_at !== undefined) row.last_activity_at = s.last_activity_at;
      for (const key of ["transcript_path", "repo_root", "branch", "title"] as const) {
        if (s.meta[key] !== undefined) row[key] = s.meta[key];
      }
      if (s.last_user_input_at !== undefined) row.last_user_input_at = s.last_user_input_at;
      if (s.gateway_active_at !== undefined) row.gateway_active_at = s.gateway_active_at;
      if (s.client_version !== undefined) row.client_version = s.client_version;
      peers.push(row);
    }
    return peers;
  }

  /** The last_live rows within their retention, as stored: the same objects
   * until the row changes (`state` is added by the reader, lostStateOf). */
  lastLiveRows(): LastLiveSession[] {
    const rows: LastLiveSession[] = [];
    const now = this.clock.now();
    for (const row of this.lost.values()) if (!this.expired(row, now)) rows.push(row);
    return rows;
  }

  /** repo, ws, cwd are required on rows; the instance fills them in from what
   * it was told, deriving names from the paths when not stated. */
  private location(meta: SessionMeta): { repo: string; ws: string; cwd: string } {
    const cwd = meta.cwd ?? "";
    const repo =
      meta.repo ?? (meta.repo_root ? basename(meta.repo_root) : cwd ? basename(cwd) : "");
    const ws = meta.ws ?? (cwd ? basename(cwd) : "");
    return { repo, ws, cwd };
  }

  private expired(row: LastLiveSession, now = this.clock.now()): boolean {
    return row.last_seen_at + LAST_LIVE_RETENTION_MS <= now;
  }

  /** Rows leave last_live when their retention passes; a timer at the next
   * expiry makes the peers view say so without anyone asking. */
  private scheduleExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    this.expiryAt = Number.POSITIVE_INFINITY;
    let next = Number.POSITIVE_INFINITY;
    for (const row of this.lost.values())
      next = Math.min(next, row.last_seen_at + LAST_LIVE_RETENTION_MS);
    this.expireBy(next);
  }

  /** Have the expiry timer fire by `at` (a row recorded now expires last, so
   * recording one does not look at every other row; a timer that finds
   * nothing due sets the next one). */
  private expireBy(at: number): void {
    if (!Number.isFinite(at) || at >= this.expiryAt) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = at;
    const wait = Math.min(Math.max(0, at - this.clock.now()), 2 ** 31 - 1);
    this.expiryTimer = setTimeout(() => this.expire(), wait);
    this.expiryTimer.unref();
  }

  /** Drop expired rows now (also after a test moved the clock). */
  expire(): void {
    const now = this.clock.now();
    let any = false;
    for (const [sid, row] of this.lost) {
      if (this.expired(row)) {
        this.lost.delete(sid);
        this.forget(sid);
        any = true;
      }
    }
    if (any) {
      this.lostChanges++;
      this.persist(() => this.store.prune(now, LAST_LIVE_RETENTION_MS));
      this.changed();
    }
    this.scheduleExpiry();
  }

  dispose(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
  }
}

function sameHarness(a: HarnessPresence | undefined, b: HarnessPresence): boolean {
  return (
    a !== undefined &&
    a.cwd === b.cwd &&
    a.name === b.name &&
    a.waiting === b.waiting &&
    a.reachable === b.reachable
  );
}
