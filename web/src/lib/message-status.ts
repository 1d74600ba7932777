import type { Receipt } from "../../../src/contract/receipts.js";
import { clockTime, fullTime } from "./time.js";

// What to say of a message on its timeline row, from its receipt (DR-0054)
// or the send's own answer (DR-0057): no connection, no DOM, tested alone.

/** One receipt, as DR-0054 shapes it. */
export type { Receipt };

/** A message row's status line: its words, and a longer title. */
export interface MessageStatus {
  state: string;
  text: string;
  title?: string;
}

/**
 * What to say of a message: from its receipt when there is one (held and
 * why, delivered, seen by the model at …, not seen and why), else for a
 * message out what the instance answered the send. Undefined: nothing known.
 */
export function messageStatus(
  item: { type: string; delivered?: unknown; reason?: unknown },
  receipt: Receipt | undefined,
): MessageStatus | undefined {
  if (receipt !== undefined) {
    const why = receipt.why ?? (typeof item.reason === "string" ? item.reason : undefined);
    switch (receipt.state) {
      case "held":
        return { state: "held", text: why === undefined ? "held" : `held (${why})` };
      case "seen":
      case "read": {
        const at = receipt.seen_at;
        return {
          state: receipt.state,
          text: at === undefined ? "seen by the model" : `seen by the model at ${clockTime(at)}`,
          title: [
            at === undefined ? undefined : `seen ${fullTime(at)}`,
            receipt.read_at === undefined ? undefined : `answered ${fullTime(receipt.read_at)}`,
            receipt.route === undefined ? undefined : `by ${receipt.route}`,
          ]
            .filter((s) => s !== undefined)
            .join(" · "),
        };
      }
      case "unseen":
        return {
          state: "unseen",
          text: why === undefined ? "not seen by the model" : `not seen by the model: ${why}`,
        };
      case "dropped":
        return { state: "dropped", text: "dropped from a full inbox" };
      default:
        return {
          state: receipt.state,
          text: receipt.state,
          ...(receipt.delivered_at === undefined
            ? {}
            : { title: `delivered ${fullTime(receipt.delivered_at)}` }),
          ...(why === undefined ? {} : { text: `${receipt.state} (${why})` }),
        };
    }
  }
  if (item.type !== "message:session:out") return undefined;
  if (item.delivered === true) return { state: "delivered", text: "delivered" };
  if (item.delivered === false)
    return {
      state: "held",
      text: typeof item.reason === "string" ? `held (${item.reason})` : "held",
    };
  return undefined;
}
