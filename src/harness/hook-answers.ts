import type { InboxMessage } from "../contract/messaging.js";
import { ADDITIONAL_CONTEXT_MAX_CHARS, fitMessages } from "./hook-delivery.js";

// What the hot hooks answer (UserPromptSubmit, PreToolUse), one code path for
// both askers: the command hooks (`inbox --hook`, `reservations check --hook`,
// a process each, over the socket) and the instance's http hook route
// (DR-0058, in-process). Each brings its I/O as a port; the rules — claim,
// the shown ledger, confirm before answering (DR-0024, DR-0050), the
// reservation verdict (DR-0041, in edit-answer.ts: a prompt hook does not
// load it) — are here.

/** A hook's JSON answer (its stdout, or an http hook's body); undefined = none. */
export type HookAnswer = Record<string, unknown> | undefined;

/** How a confirmation ended: every message recorded delivered (it is all or
 * none), none recorded (they are held again), or no answer came — the
 * instance went away, before or after recording them. */
export type Confirmation = "recorded" | "refused" | "unknown";

/** A non-empty string field of a hook payload, else undefined. */
export function payloadString(payload: Record<string, unknown>, key: string): string | undefined {
  const v = payload[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The session's shown ledger (state/shown-ledger.ts). */
export interface Ledger {
  mids(): Promise<ReadonlySet<string>>;
  add(mids: readonly string[]): Promise<void>;
  remove(mids: readonly string[]): Promise<void>;
}

/**
 * Claimed messages split by the session's shown ledger: `fresh` ones are to
 * be passed on; `shown` ones were passed on before a crash left their
 * confirmation unanswered, and are only confirmed again (DR-0050).
 */
export function splitShown(
  messages: readonly InboxMessage[],
  known: ReadonlySet<string>,
): { fresh: InboxMessage[]; shown: InboxMessage[] } {
  const fresh: InboxMessage[] = [];
  const shown: InboxMessage[] = [];
  for (const m of messages) (known.has(m.mid) ? shown : fresh).push(m);
  return { fresh, shown };
}

/** Confirm what was passed on (`fresh`) with what had been already
 * (`shown`), and keep the ledger: an unanswered confirmation writes the fresh
 * mids down, a recorded one forgets the shown ones. */
export async function confirmPassedOn(
  confirm: (messages: InboxMessage[]) => Promise<Confirmation>,
  fresh: readonly InboxMessage[],
  shown: readonly InboxMessage[],
  ledger: Ledger,
): Promise<Confirmation> {
  const outcome = await confirm([...shown, ...fresh]);
  if (outcome === "recorded") await ledger.remove(shown.map((m) => m.mid));
  if (outcome === "unknown") await ledger.add(fresh.map((m) => m.mid));
  return outcome;
}

/** A hand-over as the prompt hook uses it: claim, then confirm. */
export interface PromptHandOver {
  /** What is held for the session, claimed (oldest first). */
  claim(): Promise<InboxMessage[]>;
  confirm(messages: InboxMessage[]): Promise<Confirmation>;
}

/**
 * UserPromptSubmit (and Codex's Stop): the held messages that fit the
 * harness's 10,000-character context, oldest first, with a note about the
 * rest (which stay held) — as `additionalContext`, or at Stop as a
 * `decision: "block"` whose reason the model reads and carries on with.
 * Claimed, then confirmed before the answer is given; `confirming` is asked
 * just before (false: past the caller's deadline, answer nothing and the
 * claims go with the hand-over), after which the answer must be given.
 */
export async function promptAnswer(
  handOver: PromptHandOver,
  ledger: Ledger,
  payload: Record<string, unknown>,
  confirming: () => boolean = () => true,
): Promise<HookAnswer> {
  // Nothing held, the common case, is the whole answer: no ledger is read.
  const claimed = await handOver.claim();
  if (claimed.length === 0) return undefined;
  const { fresh, shown } = splitShown(claimed, await ledger.mids());
  const confirm = (m: InboxMessage[]) => handOver.confirm(m);
  if (fresh.length === 0) {
    if (shown.length > 0) await confirmPassedOn(confirm, fresh, shown, ledger);
    return undefined;
  }
  const { text, included } = fitMessages(fresh, ADDITIONAL_CONTEXT_MAX_CHARS);
  const event = payloadString(payload, "hook_event_name") ?? "UserPromptSubmit";
  // At Stop the messages keep the turn going (Codex, which cannot be woken
  // later); elsewhere they join the prompt's context.
  const out =
    event === "Stop"
      ? { decision: "block", reason: text }
      : { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
  if (!confirming()) return undefined;
  if ((await confirmPassedOn(confirm, included, shown, ledger)) === "refused") return undefined;
  return out;
}
