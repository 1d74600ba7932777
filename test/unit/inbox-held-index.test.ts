import { afterEach, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

// What a new message must not overtake (DR-0053) is answered from memory on
// the send path: it must never say "nothing held" while a row is held, from
// the moment its hold is asked for.

afterEach(closeInboxes);

const SID = "00000000-0000-4000-8000-000000000001";
const DAY = 24 * 3600 * 1000;
const NOW = 100 * DAY;
const WEEK = 7 * DAY;

const open = openInbox;

const message = (counter: number, sentAt = NOW): InboxMessage => ({
  mid: `i/${counter}`,
  from: "user",
  from_label: "user",
  text: "x",
  sent_at: sentAt,
});

describe("the held index", () => {
  it("says held from the hold's request to its settlement, and after a restart", async () => {
    const { dir, store, inbox } = open();
    expect(inbox.hasHeld(SID, NOW, WEEK)).toBe(false);
    const stored = inbox.hold(SID, 1, message(1), 256, WEEK);
    // Not committed yet: a send in the same turn must already see it.
    expect(inbox.hasHeld(SID, NOW, WEEK)).toBe(true);
    await stored;
    expect(inbox.hasHeld(SID, NOW, WEEK, (c) => c === 1)).toBe(false);
    store.close();
    const again = open(dir).inbox;
    expect(again.hasHeld(SID, NOW, WEEK)).toBe(true);
    await again.settleDelivered(SID, [1], NOW);
    expect(again.hasHeld(SID, NOW, WEEK)).toBe(false);
  });

  it("forgets a message dropped by the limit, one that could not be stored, and one expired", async () => {
    const { store, inbox } = open();
    await inbox.hold(SID, 1, message(1), 1, WEEK);
    expect(await inbox.hold(SID, 2, message(2), 1, WEEK)).toEqual({ dropped: "i/1" });
    expect(inbox.hasHeld(SID, NOW, WEEK, (c) => c === 2)).toBe(false);
    expect(inbox.hasHeld(SID, NOW, WEEK)).toBe(true);
    // The same counter again: the insert fails, nothing was stored.
    await expect(inbox.hold("other", 2, message(2), 256, WEEK)).rejects.toThrow();
    expect(inbox.hasHeld("other", NOW, WEEK)).toBe(false);
    // Past the retention a held row is never offered: nothing to wait for.
    expect(inbox.hasHeld(SID, NOW + WEEK, WEEK)).toBe(false);
    expect(store.db.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'held'").get()).toEqual({
      n: 1,
    });
  });
});
