import { type Signal, signal } from "@preact/signals";
import type { UndeliveredReason } from "../../../src/contract/messaging.js";
import type { CandidateSession } from "../../../src/contract/peers.js";
import { wire } from "../app-state.js";
import { WireError } from "../conn/wire.js";
import { heldChanged } from "./sessions.js";

/**
 * What the person sent from the composer, per session, with the honest
 * delivery state of each message — exactly what `message_send` answered
 * (contract §7.2), never more: `delivered` means the recipient's connection
 * took it; anything else is held and says why. A send whose answer never
 * came (the connection dropped) is shown as unknown, not as sent.
 *
 * Drafts live here too, outside the views, so neither a reconnect nor
 * moving between pages loses what was typed (and sessionStorage keeps them
 * across a reload of the tab).
 */
export type SendState =
  | { kind: "sending" }
  | { kind: "delivered" }
  /** Typed into the session's terminal as the person's prompt (DR-0055). */
  | { kind: "typed"; confirmed: boolean }
  | { kind: "held"; reason: UndeliveredReason | string; candidates: CandidateSession[] }
  | { kind: "unknown"; why: string }
  | { kind: "refused"; code: string; msg: string };

export interface Sent {
  id: number;
  text: string;
  at: number;
  state: SendState;
}

export const outbox = signal<Record<string, Sent[]>>({});
let nextId = 1;

const DRAFTS = "ccmsg-console-drafts";
const drafts = new Map<string, Signal<string>>();
const stored: Record<string, string> = (() => {
  try {
    return JSON.parse(sessionStorage.getItem(DRAFTS) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
})();

export function draftOf(sid: string): Signal<string> {
  let d = drafts.get(sid);
  if (d === undefined) {
    d = signal<string>(stored[sid] ?? "");
    drafts.set(sid, d);
    const own = d;
    own.subscribe((text) => {
      if (text === "") delete stored[sid];
      else stored[sid] = text;
      try {
        sessionStorage.setItem(DRAFTS, JSON.stringify(stored));
      } catch {}
    });
  }
  return d;
}

function update(sid: string, id: number, state: SendState): void {
  const list = outbox.peek()[sid] ?? [];
  outbox.value = {
    ...outbox.peek(),
    [sid]: list.map((s) => (s.id === id ? { ...s, state } : s)),
  };
}

/** Send `text` to `sid` as the person; the draft is cleared only once the
 * instance has taken the message (delivered or held). */
export async function send(sid: string, text: string): Promise<void> {
  const id = nextId++;
  const entry: Sent = { id, text, at: Date.now(), state: { kind: "sending" } };
  outbox.value = { ...outbox.peek(), [sid]: [...(outbox.peek()[sid] ?? []), entry] };
  try {
    const r = await wire.request("message_send", { to: sid, text });
    update(
      sid,
      id,
      r.typed !== undefined
        ? { kind: "typed", confirmed: r.typed === "confirmed" }
        : r.delivered
          ? { kind: "delivered" }
          : { kind: "held", reason: r.reason ?? "held", candidates: r.candidates ?? [] },
    );
    draftOf(sid).value = "";
  } catch (error) {
    if (error instanceof WireError && error.code === "instance_unreachable")
      update(sid, id, { kind: "unknown", why: error.message });
    else if (error instanceof WireError)
      update(sid, id, { kind: "refused", code: error.code, msg: error.message });
    else update(sid, id, { kind: "refused", code: "internal_error", msg: String(error) });
  } finally {
    heldChanged();
  }
}

/** A held reason in a person's words (contract §7.2). */
export function reasonText(reason: string): string {
  switch (reason) {
    case "preparing":
      return "the session is running but not listening yet; it gets the message when it listens";
    case "paused":
      return "the session is paused; it gets the message when it comes back";
    case "disappeared":
      return "the session is gone; it gets the message if it comes back";
    case "throttled":
      return "the session is not reading right now; the message is offered again when it reads";
    case "inbox_full":
      return "its inbox was full: the oldest held message was dropped to keep this one";
    case "instance_unreachable":
      return "the session's instance cannot be reached; the message waits there";
    default:
      return reason;
  }
}
