import type {
  AttentionDecideArgs,
  AttentionDecideResult,
  AttentionDecider,
  AttentionEnd,
  AttentionItem,
  AttentionReadArgs,
  AttentionReadResult,
} from "../../contract/attention.js";
import { contractError } from "../../contract/errors.js";
import {
  type PermissionAsk,
  type PermissionDecision,
  permissionAnswer,
} from "../../harness/permission-request.js";
import type { AttentionStore } from "../../store/attention.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { TopicHub } from "../topic-hub.js";

// The attention queue (DR-0062). A harness's PermissionRequest hook asks;
// the item is kept, shown, and the hook held until a person decides, the
// dialog is answered in the terminal (the harness's own dialog is up all
// along: the two race, and whichever comes first ends the item), the hold
// runs out, or the hook goes away. Every end is committed before the hook
// is answered; a decision that comes second is refused and kept beside the
// one that won.

/** What the harness says of a session's dialog right now. */
export type DialogState =
  /** The session waits on a prompt. */
  | { waiting: true }
  /** It does not (since `since`, ms since the epoch, when it says). */
  | { waiting: false; since?: number }
  /** The harness tells nothing (no state file, not this harness). */
  | undefined;

export interface AttentionDeps {
  instanceId: string;
  store: AttentionStore;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
  /** How long a hook is held for a decision, by harness. */
  holdMs: Record<AttentionItem["harness"], number>;
  /** How often a held item looks at its session's dialog. */
  pollMs: number;
  /** A person whose last input at the session's terminal is at most this
   * old is there: the hook falls through at once (0: never). */
  atTerminalMs: number;
  /** When the person last sent the session a message (ccmsg's typed route
   * types those into its pane: the prompt that follows is not theirs at
   * the terminal). */
  messagedAt(sid: string): number | undefined;
  dialog(sid: string): Promise<DialogState>;
  label(sid: string): string | undefined;
  /** Every item that ended, for the session's searchable record. */
  ended?(item: AttentionItem): void;
}

/** A prompt this soon after the person's message is that message, typed in
 * by ccmsg (its typed route confirms within 5 s), not the person there. */
const TYPED_ROUTE_SLACK_MS = 10_000;

interface Held {
  ask: PermissionAsk;
  item: AttentionItem;
  answer: (out: object) => void;
  timer: NodeJS.Timeout;
  poll: NodeJS.Timeout | undefined;
  /** Its end, once one is being committed: nothing else may end it. */
  ended: Promise<AttentionItem> | undefined;
}

export class Attention {
  private readonly held = new Map<number, Held>();
  /** sid → when the person last did something at its terminal: typed a
   * prompt, or answered a dialog there before any decision came. */
  private readonly atTerminal = new Map<string, number>();

  constructor(private readonly d: AttentionDeps) {}

  /** Items left pending by an instance that stopped: their hooks went with it. */
  async recover(): Promise<void> {
    for (const item of this.d.store.pending()) await this.end(item, "hook_gone");
  }

  /**
   * A hook asks. Resolves with the hook's answer: the decision's, or `{}`
   * (nothing decided: the dialog stays). `gone` aborts when the hook's
   * connection closes.
   */
  async ask(
    ask: PermissionAsk,
    harness: AttentionItem["harness"],
    gone: AbortSignal,
  ): Promise<object> {
    const label = this.d.label(ask.sid);
    const item = await this.d.store.add({
      instance: this.d.instanceId,
      sid: ask.sid,
      ...(label === undefined ? {} : { sid_label: label }),
      harness,
      kind: ask.kind,
      tool: ask.tool,
      input: ask.input,
      ...(ask.truncated ? { input_truncated: true as const } : {}),
      ...(ask.cwd === undefined ? {} : { cwd: ask.cwd }),
      ...(ask.suggestions === undefined ? {} : { suggestions: ask.suggestions }),
      ...(ask.questions === undefined ? {} : { questions: ask.questions }),
      asked_at: this.d.clock.now(),
    });
    this.publish(item);
    if (gone.aborted) {
      await this.end(item, "hook_gone");
      return {};
    }
    if (ask.terminalOnly === true) {
      await this.end(item, "terminal_only");
      return {};
    }
    // The person is at the terminal: the dialog there is theirs to answer,
    // and a hook held open would only keep the queue showing it.
    if (this.here(ask.sid, item.asked_at)) {
      await this.end(item, "at_terminal");
      return {};
    }
    return new Promise((resolve) => {
      const h: Held = {
        ask,
        item,
        answer: resolve,
        timer: setTimeout(() => void this.close(h, "timed_out"), this.d.holdMs[harness]),
        poll: undefined,
        ended: undefined,
      };
      this.held.set(item.id, h);
      gone.addEventListener("abort", () => void this.close(h, "hook_gone"), { once: true });
      this.watch(h);
    });
  }

  /** The session's harness took a prompt typed at its terminal. */
  typed(sid: string): void {
    const now = this.d.clock.now();
    const messaged = this.d.messagedAt(sid);
    if (messaged !== undefined && now - messaged < TYPED_ROUTE_SLACK_MS) return;
    this.atTerminal.set(sid, now);
  }

  /** Whether the person was at `sid`'s terminal within the window. */
  private here(sid: string, now: number): boolean {
    const at = this.atTerminal.get(sid);
    if (at === undefined || this.d.atTerminalMs <= 0) return false;
    if (now - at <= this.d.atTerminalMs) return true;
    this.atTerminal.delete(sid);
    return false;
  }

  /** A person (or a granted session) decides. */
  async decide(args: AttentionDecideArgs, by: AttentionDecider): Promise<AttentionDecideResult> {
    const h = this.held.get(args.id);
    const at = this.d.clock.now();
    if (h === undefined || h.ended !== undefined || h.item.sid !== args.sid) {
      // Second: wait for the end that won to be on disk, then keep this
      // decision beside it.
      await h?.ended?.catch(() => undefined);
      const found = this.d.store.get(args.id);
      if (found === undefined || found.sid !== args.sid) return notFound(args);
      let reason = "";
      const kept = await this.d.store.amend(args.id, (item) => {
        reason = item.end === undefined ? "it is being ended" : endedBecause(item);
        const refusal = { at, by, behavior: args.behavior, reason };
        return { ...item, refused: [...(item.refused ?? []), refusal] };
      });
      if (kept === undefined) return notFound(args);
      this.publish(kept);
      return { outcome: "refused", reason, item: kept };
    }
    const decision: PermissionDecision =
      args.behavior === "deny"
        ? { behavior: "deny", ...(args.message === undefined ? {} : { message: args.message }) }
        : {
            behavior: "allow",
            ...(args.always === true ? { always: true } : {}),
            ...(args.answers === undefined ? {} : { answers: args.answers }),
          };
    const ended = await this.close(h, args.behavior === "allow" ? "allowed" : "denied", {
      decided_by: by,
      ...(args.message === undefined ? {} : { message: args.message }),
      ...(args.always === true ? { always: true as const } : {}),
      ...(args.answers === undefined ? {} : { answers: args.answers }),
      answer: permissionAnswer(h.ask, decision),
    });
    return { outcome: "decided", item: ended };
  }

  read(q: AttentionReadArgs): AttentionReadResult {
    const page = this.d.store.read({ ...q, limit: q.limit ?? 50 }, this.d.clock.now());
    return { items: page.items, pending: page.pending, ...(page.more ? { more: true } : {}) };
  }

  /** The instance stops: every held hook is answered `{}` (its dialog stays). */
  async stop(): Promise<void> {
    await Promise.all([...this.held.values()].map((h) => this.close(h, "hook_gone")));
  }

  /** Look at the session's dialog until the item ends: a dialog that is no
   * longer up, changed after the item was asked, was answered in the
   * terminal (or the session moved on). */
  private watch(h: Held): void {
    h.poll = setTimeout(async () => {
      if (h.ended !== undefined) return;
      const state = await this.d.dialog(h.item.sid).catch(() => undefined);
      if (h.ended !== undefined) return;
      if (state?.waiting === false && (state.since === undefined || state.since > h.item.asked_at))
        return void this.close(h, "answered_in_terminal");
      this.watch(h);
    }, this.d.pollMs);
  }

  /** End a held item and answer its hook, once: the end is on disk before
   * the hook hears it. */
  private close(
    h: Held,
    end: AttentionEnd,
    extra: Partial<AttentionItem> & { answer?: object } = {},
  ): Promise<AttentionItem> {
    if (h.ended !== undefined) return h.ended;
    clearTimeout(h.timer);
    clearTimeout(h.poll);
    const { answer, ...fields } = extra;
    h.ended = this.end({ ...h.item, ...fields }, end).then(
      (item) => {
        this.held.delete(h.item.id);
        h.answer(answer ?? {});
        return item;
      },
      (error: unknown) => {
        // Not on disk: no decision is given (the dialog stays).
        this.d.log.error({ err: error, id: h.item.id }, "attention end not kept");
        this.held.delete(h.item.id);
        h.answer({});
        throw error;
      },
    );
    return h.ended;
  }

  private async end(item: AttentionItem, end: AttentionEnd): Promise<AttentionItem> {
    const at = this.d.clock.now();
    const ended = await this.d.store.amend(item.id, (now) => ({
      ...now,
      ...item,
      refused: now.refused,
      end,
      ended_at: at,
    }));
    if (ended === undefined) throw new Error(`attention item ${item.id} is gone`);
    if (end === "answered_in_terminal") this.atTerminal.set(ended.sid, at);
    this.publish(ended);
    try {
      this.d.ended?.(ended);
    } catch (error) {
      this.d.log.warn({ err: error, id: ended.id }, "attention item not indexed");
    }
    return ended;
  }

  private publish(item: AttentionItem): void {
    if (this.d.hub.count("attention") > 0) this.d.hub.publish("attention", { items: [item] });
  }
}

/** Why a late decision is refused, in words. */
function endedBecause(item: AttentionItem): string {
  switch (item.end) {
    case "allowed":
    case "denied":
      return `already ${item.end}${item.decided_by?.via === undefined ? "" : ` from the ${item.decided_by.via}`}`;
    case "answered_in_terminal":
      return "it was answered in the terminal";
    case "at_terminal":
      return "the person was at the terminal: it is answered there";
    case "timed_out":
      return "nobody decided in time: answer it in the terminal";
    case "session_gone":
      return "the session ended";
    case "hook_gone":
      return "the session stopped waiting on this instance: answer it in the terminal";
    case "terminal_only":
      return "only the terminal can answer it";
    default:
      return "it ended";
  }
}

function notFound(args: AttentionDecideArgs): never {
  throw contractError("not_found", `no attention item ${args.id} of session ${args.sid}`);
}
