import { afterEach, describe, expect, it } from "vitest";
import { CommitQueue } from "../../src/store/commit-queue.js";
import { NotificationsStore } from "../../src/store/notifications.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

afterEach(closeInboxes);

const SID = "00000000-0000-4000-8000-000000000001";
const OTHER = "00000000-0000-4000-8000-000000000002";
const DAY = 24 * 3600 * 1000;
const NOW = 100 * DAY;

/** The person's inbox on a real file, bounded to `max` rows and `days`. */
function open(max: number, days = 7, dir?: string) {
  const { store, dir: at } = openInbox(dir);
  const notes = new NotificationsStore(store.db, new CommitQueue(store.db, at), max, days * DAY);
  const note = (text: string, sentAt = NOW, sid = SID) =>
    notes.add({ sid, sid_label: "widgets", text, sent_at: sentAt });
  return { store, notes, note, dir: at };
}

describe("the person's inbox store (DR-0056)", () => {
  it("keeps at most its bound: the next one drops the oldest, ids never reused", async () => {
    const { notes, note } = open(3);
    const ids = [];
    for (const t of ["a", "b", "c", "d", "e"]) ids.push((await note(t)).id);
    const page = notes.read({ limit: 10 }, NOW);
    expect(page.notifications.map((n) => n.text)).toEqual(["e", "d", "c"]);
    expect(page.unread).toBe(3);
    expect(new Set(ids).size).toBe(5);
  });

  it("leaves out what is past its age, and compaction removes it from the file", async () => {
    const { store, notes, note } = open(100, 7);
    await note("old", NOW - 8 * DAY);
    await note("fresh", NOW - DAY);
    expect(notes.read({ limit: 10 }, NOW).notifications.map((n) => n.text)).toEqual(["fresh"]);
    expect(notes.unread(NOW)).toBe(1);
    expect(await notes.compact(NOW)).toBe(1);
    const rows = store.db.prepare("SELECT text FROM notifications").all();
    expect(rows).toEqual([{ text: "fresh" }]);
  });

  it("marks read by id, by session or all, and the marks are in the file", async () => {
    const { notes, note, dir, store } = open(100);
    const a = await note("a");
    await note("b", NOW, OTHER);
    await note("c");
    expect(await notes.markRead({ ids: [a.id, a.id] }, NOW + 1)).toEqual({ marked: 1, unread: 2 });
    expect(await notes.markRead({ all: true, sid: OTHER }, NOW + 2)).toEqual({
      marked: 1,
      unread: 1,
    });
    store.close();
    const again = open(100, 7, dir);
    const page = again.notes.read({ limit: 10 }, NOW + 3);
    expect(page.notifications.map((n) => [n.text, n.read_at])).toEqual([
      ["c", undefined],
      ["b", NOW + 2],
      ["a", NOW + 1],
    ]);
    expect(again.notes.read({ unread: true, limit: 10 }, NOW + 3).notifications).toHaveLength(1);
    expect(await again.notes.markRead({ all: true }, NOW + 4)).toEqual({ marked: 1, unread: 0 });
  });

  it("pages newest first with before, and says when more follow", async () => {
    const { notes, note } = open(100);
    for (const t of ["1", "2", "3", "4", "5"]) await note(t);
    const first = notes.read({ limit: 2 }, NOW);
    expect(first.notifications.map((n) => n.text)).toEqual(["5", "4"]);
    expect(first.more).toBe(true);
    const next = notes.read({ limit: 5, before: first.notifications[1]!.id }, NOW);
    expect(next.notifications.map((n) => n.text)).toEqual(["3", "2", "1"]);
    expect(next.more).toBe(false);
  });
});
