import type { WorkItem } from "../../contract/ecc/board.js";
import { isDoneStatus } from "../../contract/ecc/lanes.js";

// How a sync's view of an item meets the board's (DR-0040). The source owns
// what it describes (title, url, its metadata keys); the person owns what
// they changed on the board (a claim, a move, an owner, a priority). The
// sync remembers what it wrote last (`metadata.synced`), so a field whose
// value differs from that was changed here and is kept. One exception: a
// source saying the work is over (merged, closed, completed) ends it.

/** What a source says an item is. */
export interface SyncedItem {
  id: string;
  source: string;
  sourceId: string | null;
  title: string;
  status: string;
  priority: string | null;
  url: string | null;
  /** The assignee (never the author). */
  owner: string | null;
  /** The source's own keys; merged over the item's other metadata. */
  metadata: Record<string, unknown>;
}

/** The fields a person may take over from the sync. */
const OWNED = ["status", "owner", "priority"] as const;
type Owned = (typeof OWNED)[number];

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...(value as object) }
    : {};
}

/**
 * Whether the board's value of `field` was set here rather than by a sync.
 * Rows an older sync wrote without a record (ECC's `sync-github`): status and
 * priority are the sync's; the owner too when it is empty, an assignee, or
 * the author — the legacy rows that stored the author as owner are released
 * now that the author is verified (ecc-surfaces §4.3).
 */
function setHere(existing: WorkItem, desired: SyncedItem, field: Owned): boolean {
  const meta = asObject(existing.metadata);
  if (field === "owner" && meta.claimOwnerSource === "local") return true;
  const wrote = meta.synced;
  if (typeof wrote === "object" && wrote !== null && !Array.isArray(wrote))
    return (existing[field] ?? null) !== ((wrote as Record<string, unknown>)[field] ?? null);
  if (typeof meta.syncedBy !== "string") return true;
  if (field !== "owner" || existing.owner === null) return false;
  const known = [
    desired.metadata.authorLogin,
    ...(Array.isArray(desired.metadata.assignees) ? desired.metadata.assignees : []),
  ];
  return !known.includes(existing.owner);
}

function same(a: WorkItem, b: WorkItem): boolean {
  const strip = ({ updatedAt: _u, ...rest }: WorkItem) => JSON.stringify(rest);
  return strip(a) === strip(b);
}

/**
 * The item to write for `desired`, or undefined when the board already says
 * it. A new item takes the source's values; an existing one keeps its
 * creation time, session, repo root, other metadata, and whatever a person
 * set here.
 */
export function mergeSynced(
  existing: WorkItem | undefined,
  desired: SyncedItem,
  now: string,
): WorkItem | undefined {
  const synced = { status: desired.status, owner: desired.owner, priority: desired.priority };
  if (existing === undefined) {
    return {
      ...desired,
      repoRoot: null,
      sessionId: null,
      metadata: { ...desired.metadata, synced },
      createdAt: now,
      updatedAt: now,
    };
  }
  const keep = (field: Owned) => setHere(existing, desired, field);
  const ending = isDoneStatus(desired.status) && !isDoneStatus(existing.status);
  const merged: WorkItem = {
    ...existing,
    source: desired.source,
    sourceId: desired.sourceId,
    title: desired.title,
    url: desired.url,
    status: ending || !keep("status") ? desired.status : existing.status,
    owner: keep("owner") ? existing.owner : desired.owner,
    priority: keep("priority") ? existing.priority : desired.priority,
    metadata: { ...asObject(existing.metadata), ...desired.metadata, synced },
    updatedAt: now,
  };
  return same(existing, merged) ? undefined : merged;
}

/**
 * Close an item the source confirmed gone (`closed`, or `done` for a merged
 * PR), or undefined when it is already in the done lane.
 */
export function closeSynced(
  existing: WorkItem,
  status: string,
  now: string,
  why: string,
): WorkItem | undefined {
  if (isDoneStatus(existing.status)) return undefined;
  const meta = asObject(existing.metadata);
  return {
    ...existing,
    status,
    metadata: { ...meta, synced: { ...asObject(meta.synced), status }, closedBySync: why },
    updatedAt: now,
  };
}
