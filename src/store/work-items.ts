import type { WorkItem, WorkItemInput } from "../contract/ecc/board.js";
import { isDoneStatus } from "../contract/ecc/lanes.js";
import type { Db } from "./database.js";

/** A `work_items` row as both stores read it (the file's and the team
 * board's, DR-0046); `M` is how the metadata arrives: JSON text from SQLite,
 * already parsed from PostgreSQL's jsonb. */
export interface WorkItemRow<M = string> {
  id: string;
  source: string;
  source_id: string | null;
  title: string;
  status: string;
  priority: string | null;
  url: string | null;
  owner: string | null;
  repo_root: string | null;
  session_id: string | null;
  metadata: M;
  created_at: string;
  updated_at: string;
}

type Row = WorkItemRow;

/** The row as a work item, its metadata through `parse`. */
export function workItemOf<M>(r: WorkItemRow<M>, parse: (m: M) => unknown): WorkItem {
  return {
    id: r.id,
    source: r.source,
    sourceId: r.source_id,
    title: r.title,
    status: r.status,
    priority: r.priority,
    url: r.url,
    owner: r.owner,
    repoRoot: r.repo_root,
    sessionId: r.session_id,
    metadata: parse(r.metadata),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const toItem = (r: Row): WorkItem => workItemOf(r, (m) => JSON.parse(m) as unknown);

/** Counts of every status, over all items (never a window). */
export interface StatusCounts {
  total: number;
  byStatus: Map<string, number>;
  /** Open items with and without an owner, by assignee kind. */
  agent: number;
  human: number;
  unassigned: number;
}

/**
 * The work_items table. Parameterised SQL only; every lookup is indexed, so a
 * call costs the same at 200 items as at 6,000.
 */
export class WorkItemsStore {
  private readonly get_;
  private readonly upsert_;
  private readonly recent_;
  private readonly counts_;
  private readonly changedSince_;
  private readonly session_;
  private readonly all_;

  constructor(db: Db) {
    this.get_ = db.prepare("SELECT * FROM work_items WHERE id = ?");
    this.upsert_ = db.prepare(
      `INSERT INTO work_items (id, source, source_id, title, status, priority, url, owner, repo_root, session_id, metadata, created_at, updated_at)
       VALUES (@id, @source, @sourceId, @title, @status, @priority, @url, @owner, @repoRoot, @sessionId, @metadata, @createdAt, @updatedAt)
       ON CONFLICT(id) DO UPDATE SET source = excluded.source, source_id = excluded.source_id, title = excluded.title,
         status = excluded.status, priority = excluded.priority, url = excluded.url, owner = excluded.owner,
         repo_root = excluded.repo_root, session_id = excluded.session_id, metadata = excluded.metadata,
         updated_at = excluded.updated_at`,
    );
    this.recent_ = db.prepare("SELECT * FROM work_items ORDER BY updated_at DESC, id DESC LIMIT ?");
    // One grouped pass: per status, per assignee kind. Which statuses are done
    // is the board's rule (lanes.ts), applied to the groups in code; the kind
    // follows `snapshotItem`: no owner = unassigned, else metadata's kind
    // (agent), else human.
    this.counts_ = db.prepare(
      `SELECT status, CASE WHEN owner IS NULL OR owner = '' THEN 'unassigned'
                           WHEN json_extract(metadata, '$.assigneeKind') = 'agent' THEN 'agent'
                           ELSE 'human' END AS kind, count(*) AS n
       FROM work_items GROUP BY status, kind`,
    );
    this.session_ = db.prepare("SELECT 1 FROM sessions WHERE id = ?");
    this.all_ = db.prepare("SELECT * FROM work_items ORDER BY id");
    this.changedSince_ = db.prepare(
      "SELECT * FROM work_items WHERE updated_at > ? ORDER BY updated_at, id LIMIT 1000",
    );
  }

  get(id: string): WorkItem | undefined {
    const row = this.get_.get(id) as Row | undefined;
    return row === undefined ? undefined : toItem(row);
  }

  /** Whether ECC's `sessions` table has this session (an item's `session_id`
   * must name one: it is a foreign key). */
  sessionKnown(id: string): boolean {
    return this.session_.get(id) !== undefined;
  }

  /** Write a whole item (the caller merged it); `createdAt` of an existing row
   * is never overwritten. */
  put(item: WorkItem): WorkItem {
    this.upsert_.run({
      ...item,
      metadata: JSON.stringify(item.metadata ?? null),
    });
    return this.get(item.id)!;
  }

  /** Merge `input` into the item (only the given fields change), stamping
   * `updatedAt`; a new item needs a title. */
  upsert(input: WorkItemInput & { id: string }, now: string): WorkItem {
    return this.put(mergeWorkItem(input, this.get(input.id), now));
  }

  /** Every item, by id (a copy to another store). */
  all(): WorkItem[] {
    return (this.all_.all() as Row[]).map(toItem);
  }

  /** The `limit` most recently updated items. */
  recent(limit: number): WorkItem[] {
    return (this.recent_.all(limit) as Row[]).map(toItem);
  }

  counts(): StatusCounts {
    const byStatus = new Map<string, number>();
    const out = { total: 0, byStatus, agent: 0, human: 0, unassigned: 0 };
    type Group = { status: string; kind: "agent" | "human" | "unassigned"; n: number };
    for (const r of this.counts_.all() as Group[]) {
      byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + r.n);
      out.total += r.n;
      // Done items need no owner: assignment counts only open ones.
      if (!isDoneStatus(r.status)) out[r.kind] += r.n;
    }
    return out;
  }

  /** Items changed after an instant (ISO), oldest first, for live watchers. */
  changedSince(iso: string): WorkItem[] {
    return (this.changedSince_.all(iso) as Row[]).map(toItem);
  }
}

/** `input` merged into the existing item (only the given fields change),
 * `updatedAt` stamped, `createdAt` kept; a new item needs a title. */
export function mergeWorkItem(
  input: WorkItemInput & { id: string },
  existing: WorkItem | undefined,
  now: string,
): WorkItem {
  const merged: WorkItem = {
    id: input.id,
    source: input.source ?? existing?.source ?? "manual",
    sourceId: pick(input.sourceId, existing?.sourceId),
    title: input.title ?? existing?.title ?? "",
    status: input.status ?? existing?.status ?? "open",
    priority: pick(input.priority, existing?.priority),
    url: pick(input.url, existing?.url),
    owner: pick(input.owner, existing?.owner),
    repoRoot: pick(input.repoRoot, existing?.repoRoot),
    sessionId: pick(input.sessionId, existing?.sessionId),
    metadata: input.metadata !== undefined ? input.metadata : (existing?.metadata ?? null),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  if (merged.title === "") throw new Error("a new work item needs a title");
  return merged;
}

function pick<T>(given: T | undefined, existing: T | undefined | null): T | null {
  if (given !== undefined) return given;
  return existing ?? null;
}
