// A receipt's states without the schemas (receipts.ts): the CLI that waits
// for one must not load the schema library.

/** Where a message is now, as far as the evidence goes. */
export const RECEIPT_STATES = [
  /** Kept in the recipient's inbox, not handed to its harness yet. */
  "held",
  /** Handed to the recipient's harness; its transcript does not show it yet. */
  "delivered",
  /** Its envelope is in the model's input in the recipient's transcript. */
  "seen",
  /** Seen, and the model answered after it. */
  "read",
  /** Handed over, but the recipient's transcript moved on without it (or
   * 60 s passed while the session was idle); offered again by another route,
   * then its person told. */
  "unseen",
  /** Dropped from a full inbox, never handed over. */
  "dropped",
] as const;
export type ReceiptState = (typeof RECEIPT_STATES)[number];

/** Whether a receipt says the model has the message in its context. */
export function receiptSeen(r: { state: ReceiptState }): boolean {
  return r.state === "seen" || r.state === "read";
}
