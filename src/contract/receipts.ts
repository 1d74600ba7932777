import { type Static, Type } from "@sinclair/typebox";
import { request, response, topicFrame } from "./envelope.js";
import { Mid, Sender, Sid, Timestamp } from "./identifiers.js";
import { RECEIPT_STATES } from "./receipt-states.js";
import { topicNamePattern } from "./topics.js";

// Receipts (this implementation's extension, DR-0054): what became of a
// message after it was sent — held, delivered to the harness, seen by the
// model (its envelope in a record the harness writes as the model's input,
// in the recipient's own transcript), read (the model answered after it),
// or unseen. Generation 3's `message_send` reply is untouched.
export * from "./receipt-states.js";

/** The routes a message reaches a harness by. */
export const RECEIPT_ROUTES = [
  /** Claude Code's messaging socket (route a). */
  "socket",
  /** `codex queue` (route a for Codex). */
  "codex",
  /** The session's waiter (`ccmsg wait --hook`, a hand-over subscription). */
  "waiter",
  /** A hook that took held messages once (`hand_over: "take"`). */
  "hook",
  /** A plain `inbox` subscriber (the MCP server, a client). */
  "subscriber",
  /** Typed into the session's terminal as its person's prompt (DR-0055):
   * no envelope, so seen is stamped by the typed route's own look at the
   * transcript, and it is never offered again by another route. */
  "typed",
] as const;
export type ReceiptRoute = (typeof RECEIPT_ROUTES)[number];

/** One element of `receipts` (id = `mid`). */
export const Receipt = Type.Object({
  mid: Mid,
  /** The recipient. */
  to: Sid,
  from: Sender,
  sent_at: Timestamp,
  /** The route it was handed over by, last (absent while held). */
  route: Type.Optional(Type.Union(RECEIPT_ROUTES.map((r) => Type.Literal(r)))),
  delivered_at: Type.Optional(Timestamp),
  seen_at: Type.Optional(Timestamp),
  read_at: Type.Optional(Timestamp),
  state: Type.Union(RECEIPT_STATES.map((s) => Type.Literal(s))),
  /** Why the state is what it is when the evidence is missing: no receipt
   * can come (the search index is failing), or why it counted as unseen. */
  why: Type.Optional(Type.String()),
});
export type Receipt = Static<typeof Receipt>;

/** `receipts` (element, keyed by `mid`): a person's holds every message's;
 * `receipts:<sid>` is a session's own sends. The snapshot is the recent
 * ones; later frames carry each receipt that changed. */
export const ReceiptsData = Type.Object({ receipts: Type.Array(Receipt) });
export type ReceiptsData = Static<typeof ReceiptsData>;
export const ReceiptsFrame = topicFrame(topicNamePattern("receipts"), ReceiptsData);

/** How many mids one `receipts_read` names at most. */
export const RECEIPTS_READ_MAX = 50;

/** `receipts_read` (extension): the receipts of a few messages at once. A
 * session reads only its own sends' receipts; a mid it did not send (or one
 * no longer kept) is left out. */
export const ReceiptsReadArgs = Type.Object({
  mids: Type.Array(Mid, { minItems: 1, maxItems: RECEIPTS_READ_MAX }),
});
export type ReceiptsReadArgs = Static<typeof ReceiptsReadArgs>;
export const ReceiptsReadResult = ReceiptsData;
export const ReceiptsReadRequest = request("receipts_read", ReceiptsReadArgs);
export const ReceiptsReadResponse = response("receipts_read", ReceiptsReadResult);
