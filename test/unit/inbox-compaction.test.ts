import { afterEach, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { putLegacyRows } from "../../src/store/migrations/0015-inbox-compact.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

afterEach(closeInboxes);

const SID = "00000000-0000-4000-8000-000000000001";
const DAY = 24 * 3600 * 1000;
const NOW = 100 * DAY;

function open() {
  const { store, inbox } = openInbox();
  const add = (counter: number, state: string, sentAt: number) =>
    putLegacyRows(store.db, [
      {
        counter,
        sid: SID,
        state,
        message: JSON.stringify(message(counter, sentAt)),
        sent_at: sentAt,
      },
    ]);
  const rows = () =>
    (
      store.db.prepare("SELECT counter FROM inbox ORDER BY counter").all() as { counter: number }[]
    ).map((r) => r.counter);
  return { store, inbox, add, rows };
}

function message(counter: number, sentAt: number): InboxMessage {
  return { mid: `i/${counter}`, from: "user", from_label: "user", text: "x", sent_at: sentAt };
}

describe("inbox compaction", () => {
  it("removes settled and expired rows in small steps, keeps what is held, and keeps the mid floor", async () => {
    const { inbox, add, rows } = open();
    const fresh = NOW - DAY;
    const expired = NOW - 10 * DAY;
    for (let c = 1; c <= 20; c++) {
      if (c % 4 === 0) add(c, "held", expired);
      else if (c % 3 === 0) add(c, c % 2 ? "dropped" : "delivered", fresh);
      else add(c, "held", fresh);
    }
    add(21, "delivered", fresh); // the highest counter: only the floor remembers it
    const held = rows().filter((c) => c % 4 !== 0 && c % 3 !== 0 && c !== 21);
    const removed = await inbox.compact(NOW, 7 * DAY, 3);
    expect(rows()).toEqual(held);
    expect(removed).toBe(21 - held.length);
    expect(inbox.midFloor()).toBe(21);
  });

  it("lets other writes commit between its steps and never removes what was stored after it began", async () => {
    const { inbox, add, rows } = open();
    for (let c = 1; c <= 30; c++) add(c, "delivered", NOW - DAY);
    let compacted = false;
    const compaction = inbox.compact(NOW, 7 * DAY, 2).then((n) => {
      compacted = true;
      return n;
    });
    // Queued after compaction began: a write that settles at once.
    await inbox.recordDelivered(SID, 31, message(31, NOW));
    expect(compacted).toBe(false);
    expect(await compaction).toBe(30);
    expect(rows()).toEqual([31]);
    expect(inbox.midFloor()).toBe(31);
  });

  it("forgets the names only removed rows used, and a message to one of them later still reads right", async () => {
    const { store, inbox, rows } = open();
    const OTHER = "00000000-0000-4000-8000-000000000002";
    const names = () =>
      (
        store.db.prepare("SELECT name FROM inbox_names ORDER BY name").pluck().all() as string[]
      ).sort();
    const to = (c: number, sentAt: number, from = "user") => ({
      ...message(c, sentAt),
      from,
      from_label: `label of ${from}`,
    });
    await inbox.recordDelivered(OTHER, 1, to(1, NOW - 2 * DAY, SID));
    await inbox.recordDelivered(SID, 2, to(2, NOW));
    expect(names()).toEqual(["i", OTHER, SID, "label of user", `label of ${SID}`, "user"].sort());
    await inbox.compact(NOW, 7 * DAY);
    expect(rows()).toEqual([2]);
    // OTHER and SID's label went with row 1; SID is still a recipient.
    expect(names()).toEqual(["i", SID, "label of user", "user"].sort());
    await inbox.recordDelivered(OTHER, 3, to(3, NOW, SID));
    expect(inbox.receiptRows([2, 3]).map((r) => [r.sid, r.message])).toEqual([
      [SID, to(2, NOW)],
      [OTHER, to(3, NOW, SID)],
    ]);
  });

  it("keeps delivered rows for a day, for their receipts (DR-0054)", async () => {
    const { inbox, add, rows } = open();
    add(1, "delivered", NOW - 2 * DAY);
    add(2, "delivered", NOW - 3600 * 1000);
    add(3, "dropped", NOW - 3600 * 1000);
    await inbox.compact(NOW, 7 * DAY);
    expect(rows()).toEqual([2]);
  });
});
