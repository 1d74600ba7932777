import type { TeamBoard } from "../../board/team-board.js";
import { WorkItemsWatch } from "../../board/watch.js";
import type { WorkItem } from "../../contract/ecc/board.js";
import type { Db } from "../../store/database.js";
import { WorkItemsStore } from "../../store/work-items.js";
import type { TopicHub } from "../topic-hub.js";

/** How many recently updated items a `work_items` snapshot carries; older
 * items arrive as they change. */
const WORK_ITEMS_SNAPSHOT = 200;

export interface WorkItemsTopic {
  /** Items changed through this instance (the control-pane API). */
  offer(items: WorkItem[]): void;
  dispose(): void;
}

/**
 * Serve `work_items` (this implementation's extension): a snapshot of the
 * newest items, then every change however it was made — the watch notices
 * other processes' writes only while someone holds the topic.
 */
export function serveWorkItems(db: Db, hub: TopicHub): WorkItemsTopic {
  const watch = new WorkItemsWatch(db, (items) => {
    if (hub.count("work_items") === 0) watch.setWatched(false);
    else hub.publish("work_items", { items });
  });
  const store = new WorkItemsStore(db);
  hub.provideSnapshot("work_items", () => {
    watch.setWatched(true);
    return { items: store.recent(WORK_ITEMS_SNAPSHOT) };
  });
  return watch;
}

/**
 * Serve `work_items` from a team board in PostgreSQL: the snapshot is the
 * newest items, then every change any instance or CLI committed, as the
 * database announces it. Changes made through this instance arrive the same
 * way, so `offer` has nothing to add.
 */
export function serveTeamWorkItems(board: TeamBoard, hub: TopicHub): WorkItemsTopic {
  const off = board.onChange((items) => {
    if (hub.count("work_items") > 0) hub.publish("work_items", { items });
  });
  hub.provideSnapshot("work_items", () => ({ items: board.recent() }));
  return { offer: () => {}, dispose: () => void off() };
}
