import { afterEach, describe, expect, it } from "vitest";
import type { InboxMessage } from "../../src/contract/messaging.js";
import { closeInboxes, openInbox } from "../helpers/db.js";

afterEach(closeInboxes);

// What a transcript's send is matched to (DR-0057) and what `ccmsg sent`
// lists (DR-0054): the rows of one sender, newest first, over the day of
// delivered rows the store keeps.

const TO = "00000000-0000-4000-8000-00000000000b";
const A = "00000000-0000-4000-8000-00000000000a";
const C = "00000000-0000-4000-8000-00000000000c";

function message(counter: number, from: string, sentAt: number): InboxMessage {
  return { mid: `i/${counter}`, from, from_label: from, text: "done: migrated", sent_at: sentAt };
}

describe("the sends an inbox store remembers", () => {
  it("finds a sender's sends in a window, newest first, never another sender's same words", async () => {
    const { inbox } = openInbox();
    const at = 1_000_000;
    let counter = 0;
    for (const [from, sentAt] of [
      [A, at - 60_000],
      [C, at - 1_000],
      [A, at - 500],
      [A, at + 60_000],
    ] as const) {
      counter++;
      await inbox.recordDelivered(TO, counter, message(counter, from, sentAt));
    }
    const found = inbox.sentBetween(A, at - 10_000, at + 5_000, 10);
    expect(found?.map((r) => r.message.mid)).toEqual(["i/3"]);
    expect(inbox.sentBetween(A, 0, at + 100_000, 10)?.map((r) => r.message.mid)).toEqual([
      "i/4",
      "i/3",
      "i/1",
    ]);
    expect(inbox.sentBetween(C, 0, at + 100_000, 10)?.map((r) => r.to)).toEqual([TO]);

    expect(inbox.recentReceipts(A, 2).map((r) => r.counter)).toEqual([4, 3]);
    expect(inbox.recentReceipts(undefined, 10).map((r) => r.counter)).toEqual([4, 3, 2, 1]);
  });
});
