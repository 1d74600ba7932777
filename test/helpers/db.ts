import { join } from "node:path";
import Database from "better-sqlite3";

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
