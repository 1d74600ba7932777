import type { SnapshotWorkItem, WorkItem } from "./board.js";
import { workItemLane } from "./lanes.js";

/** A work item as the snapshot and the board show it: the model plus the
 * columns derived from it (one function, so every surface agrees). */
export function snapshotItem(item: WorkItem): SnapshotWorkItem {
  const meta = (
    typeof item.metadata === "object" && item.metadata !== null && !Array.isArray(item.metadata)
      ? item.metadata
      : {}
  ) as Record<string, unknown>;
  const str = (...keys: string[]) => {
    for (const k of keys)
      if (typeof meta[k] === "string" && meta[k] !== "") return meta[k] as string;
    return null;
  };
  const kind = meta.assigneeKind === "agent" ? "agent" : "human";
  return {
    id: item.id,
    source: item.source,
    sourceId: item.sourceId,
    title: item.title,
    status: item.status,
    kanbanState: workItemLane(item.status),
    priority: item.priority,
    url: item.url,
    owner: item.owner,
    repoRoot: item.repoRoot,
    sessionId: item.sessionId,
    branch: str("branch", "headRefName"),
    mergeGate: str("mergeGate", "mergeGateStatus", "mergeStateStatus"),
    blocker: str("blocker"),
    acceptance: Array.isArray(meta.acceptance)
      ? meta.acceptance.filter((a): a is string => typeof a === "string")
      : [],
    metadata: camelKeys(meta),
    assigneeKind: item.owner ? kind : "unassigned",
    assignee: item.owner,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
}

function camelKeys(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())] = v;
  return out;
}
