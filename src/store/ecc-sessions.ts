import { harnessOf } from "../contract/peers.js";
import type { Db } from "./database.js";

/** What the instance mirrors of one session into ECC's `sessions` table
 * (`adapter_id = 'ccmsg'`), as the row's `snapshot` JSON. */
export interface MirroredSession {
  sid: string;
  instance: string;
  /** `active` while live; once lost, how it ended: `stopped` (by a person),
   * `completed` (by itself), else `disappeared` (`paused` in older rows). */
  state: "active" | "stopped" | "completed" | "paused" | "disappeared";
  repo?: string;
  ws?: string;
  cwd?: string;
  repo_root?: string;
  branch?: string;
  title?: string;
  model?: string;
  effort?: string;
  transcript_path?: string;
  /** Unix ms, as on the wire. */
  connected_at?: number;
  last_seen_at?: number;
  stopped_at?: number;
}

export const CCMSG_ADAPTER = "ccmsg";

/**
 * ECC's `sessions` table as ccmsg fills it: one row per session the instance
 * has seen, written when it connects and when it is lost, so `ccmsg status`,
 * `ccmsg hud` and ECC's own tools read the same sessions without asking the
 * instance. `state` is `active` while connected (ECC's "active session" rule
 * reads it), otherwise the lost state with `ended_at`.
 */
export class EccSessionsStore {
  private readonly upsert_;
  private readonly latest_;
  private readonly get_;

  constructor(db: Db) {
    this.upsert_ = db.prepare(
      `INSERT INTO sessions (id, adapter_id, harness, state, repo_root, started_at, ended_at, snapshot)
       VALUES (@id, @adapter, @harness, @state, @repoRoot, @startedAt, @endedAt, @snapshot)
       ON CONFLICT(id) DO UPDATE SET adapter_id = excluded.adapter_id, harness = excluded.harness, state = excluded.state,
         repo_root = excluded.repo_root, started_at = excluded.started_at, ended_at = excluded.ended_at, snapshot = excluded.snapshot`,
    );
    this.latest_ = db.prepare(
      `SELECT snapshot FROM sessions WHERE adapter_id = 'ccmsg'
       ORDER BY (ended_at IS NULL) DESC, COALESCE(ended_at, started_at) DESC LIMIT ?`,
    );
    this.get_ = db.prepare("SELECT snapshot FROM sessions WHERE id = ? AND adapter_id = 'ccmsg'");
  }

  put(s: MirroredSession): void {
    this.upsert_.run({
      id: s.sid,
      adapter: CCMSG_ADAPTER,
      harness: harnessOf(s),
      state: s.state,
      repoRoot: s.repo_root ?? null,
      startedAt: s.connected_at === undefined ? null : new Date(s.connected_at).toISOString(),
      endedAt:
        s.state === "active" || s.last_seen_at === undefined
          ? null
          : new Date(s.last_seen_at).toISOString(),
      snapshot: JSON.stringify(s),
    });
  }

  get(sid: string): MirroredSession | undefined {
    const row = this.get_.get(sid) as { snapshot: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.snapshot) as MirroredSession);
  }

  /** Connected sessions first, then the most recently lost. */
  latest(limit: number): MirroredSession[] {
    return (this.latest_.all(limit) as { snapshot: string }[]).map(
      (r) => JSON.parse(r.snapshot) as MirroredSession,
    );
  }
}
