import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { CommitQueue } from "../../src/store/commit-queue.js";
import { InboxStore } from "../../src/store/inbox.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import type { StateStore } from "../../src/store/state-store.js";

/** Inbox rows as the instance stored them, read through SQLite itself. */
export function inboxRows(
  stateDir: string,
): { counter: number; sid: string; state: string; text: string }[] {
  const db = new Database(join(stateDir, "ccmsg.db"), { readonly: true });
  try {
    return (
      db.prepare("SELECT counter, sid, state, message FROM inbox ORDER BY counter").all() as {
        counter: number;
        sid: string;
        state: string;
        message: string;
      }[]
    ).map((r) => ({
      counter: r.counter,
      sid: r.sid,
      state: r.state,
      text: JSON.parse(r.message).text,
    }));
  } finally {
    db.close();
  }
}

/** An instance's inbox store on a real SQLite file in a temp directory (or
 * `dir`, to open the same file again); `closeInboxes` closes and removes
 * every one opened. */
export function openInbox(dir = mkdtempSync(join(tmpdir(), "ccmsg-inbox-"))) {
  if (!opened.dirs.includes(dir)) opened.dirs.push(dir);
  const store = openStateStore(join(dir, "ccmsg.db"));
  opened.stores.push(store);
  const inbox = new InboxStore(store.db, new CommitQueue(store.db, join(dir, "ccmsg.db")));
  return { dir, store, inbox };
}

const opened: { dirs: string[]; stores: StateStore[] } = { dirs: [], stores: [] };

export function closeInboxes(): void {
  for (const s of opened.stores.splice(0)) s.close();
  for (const d of opened.dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
