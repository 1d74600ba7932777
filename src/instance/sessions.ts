import { basename } from "node:path";
import { CANDIDATES_MAX, LAST_LIVE_RETENTION_MS } from "../contract/constants.js";
import type { InstanceId, Sid } from "../contract/identifiers.js";
import {
  type CandidateSession,
  classify,
  type LastLiveSession,
  lostStateOf,
  type PeerInfo,
  SESSION_META_KEYS,
  type SessionMeta,
} from "../contract/peers.js";
import type { LastLiveStore } from "../store/last-live.js";
import type { Clock } from "./clock.js";
import type { Connection } from "./wire/connection.js";

/** What the instance knows of one connected session. */
export interface LiveSession {
  sid: Sid;
  meta: SessionMeta;
  connections: Set<Connection>;
  connected_at: number;
  last_activity_at: number;
  last_user_input_at?: number;
  protocol_version: number;
  client_version?: string;
  /** Held from `session_stopping` until the last connection closes. */
  stopped_at?: number;
}

/** Where a sid stands now. */
export type SessionLookup =
  | { kind: "live"; session: LiveSession }
  | { kind: "lost"; row: LastLiveSession }
  | undefined;

/**
 * The session registry, keyed by sid. A session may hold several connections;
 * it is live while it holds one. When its last connection closes it moves to
 * `last_live`, as `paused` if it declared `session_stopping` (the declaration
 * and the disconnect are one event, in that order) and `disappeared`
 * otherwise.
 */
export class Sessions {
  private readonly live = new Map<Sid, LiveSession>();
  private readonly lost = new Map<Sid, LastLiveSession>();
  /** First registration per sid since this instance started: `connected_at`
   * stays stable across reconnects and resets with the instance. */
  private readonly firstSeen = new Map<Sid, number>();
  private readonly listeners: (() => void)[] = [];
  private changes = 0;
  private readonly lifecycle: ((s: LiveSession | LastLiveSession) => void)[] = [];
  private expiryTimer: NodeJS.Timeout | undefined;
  private closed = false;

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
    if (earlier !== undefined) {
      this.lost.delete(sid);
      this.persist(() => this.store.remove(sid));
    }
    let s = this.live.get(sid);
    if (s === undefined) {
      const first = this.firstSeen.get(sid) ?? now;
      this.firstSeen.set(sid, first);
      s = {
        sid,
        meta: {},
        connections: new Set(),
        connected_at: first,
        last_activity_at: now,
        protocol_version: protocolVersion,
      };
      this.live.set(sid, s);
      // What the session stated before it was lost still holds: an omitted
      // field never withdraws a stated one, across a reconnect too.
      if (earlier !== undefined) {
        for (const key of SESSION_META_KEYS) {
          const value = earlier[key];
          if (typeof value === "string" && value !== "") s.meta[key] = value;
        }
      }
    }
    for (const key of SESSION_META_KEYS) {
      const value = meta[key];
      if (value !== undefined) s.meta[key] = value;
    }
    s.connections.add(conn);
    s.protocol_version = protocolVersion;
    if (clientVersion !== undefined) s.client_version = clientVersion;
    s.last_activity_at = now;
    for (const l of this.lifecycle) l(s);
    this.changed();
  }

  /** A connection of a session closed. */
  detach(conn: Connection, sid: Sid): void {
    if (this.closed) return;
    const s = this.live.get(sid);
    if (s === undefined || !s.connections.delete(conn) || s.connections.size > 0) return;
    this.live.delete(sid);
    this.record(s);
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

  private record(s: LiveSession): void {
    const sid = s.sid;
    const now = this.clock.now();
    const row: LastLiveSession = {
      sid,
      instance: this.instanceId,
      ...this.location(s.meta),
      last_seen_at: now,
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
    this.persist(() => this.store.put(row));
    for (const l of this.lifecycle) l(row);
    if (this.closed) return;
    this.scheduleExpiry();
    this.changed();
  }

  /** The session declared it is about to stop; held until it disconnects. */
  declareStopping(sid: Sid): number {
    const now = this.clock.now();
    const s = this.live.get(sid);
    if (s !== undefined) s.stopped_at = now;
    return now;
  }

  /** A request arrived from the session. */
  touch(sid: Sid): void {
    const s = this.live.get(sid);
    if (s !== undefined) {
      s.last_activity_at = this.clock.now();
      this.changed();
    }
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
    if (existed) this.changed();
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
    near.sort((a, b) => b.last_activity_at - a.last_activity_at);
    return near.slice(0, CANDIDATES_MAX).map((s) => {
      const c: CandidateSession = { sid: s.sid, instance: this.instanceId };
      const { ws } = this.location(s.meta);
      if (ws) c.ws = ws;
      return c;
    });
  }

  /** The `peers` value of this instance. */
  peers(): { peers: PeerInfo[]; last_live: LastLiveSession[] } {
    const peers: PeerInfo[] = [];
    for (const s of this.live.values()) {
      const row: PeerInfo = {
        sid: s.sid,
        instance: this.instanceId,
        ...this.location(s.meta),
        state: classify({ connected: true }),
        connected_at: s.connected_at,
        last_activity_at: s.last_activity_at,
        protocol_version: s.protocol_version,
      };
      for (const key of ["transcript_path", "repo_root", "branch", "title"] as const) {
        if (s.meta[key] !== undefined) row[key] = s.meta[key];
      }
      if (s.last_user_input_at !== undefined) row.last_user_input_at = s.last_user_input_at;
      if (s.client_version !== undefined) row.client_version = s.client_version;
      peers.push(row);
    }
    const last_live: LastLiveSession[] = [];
    for (const row of this.lost.values()) {
      if (!this.expired(row)) last_live.push({ ...row, state: lostStateOf(row) });
    }
    return { peers, last_live };
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

  private expired(row: LastLiveSession): boolean {
    return row.last_seen_at + LAST_LIVE_RETENTION_MS <= this.clock.now();
  }

  /** Rows leave last_live when their retention passes; a timer at the next
   * expiry makes the peers view say so without anyone asking. */
  private scheduleExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    let next = Number.POSITIVE_INFINITY;
    for (const row of this.lost.values())
      next = Math.min(next, row.last_seen_at + LAST_LIVE_RETENTION_MS);
    if (!Number.isFinite(next)) return;
    const wait = Math.min(Math.max(0, next - this.clock.now()), 2 ** 31 - 1);
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
        any = true;
      }
    }
    if (any) {
      this.persist(() => this.store.prune(now, LAST_LIVE_RETENTION_MS));
      this.changed();
    }
    this.scheduleExpiry();
  }

  dispose(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
  }
}
