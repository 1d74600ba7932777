import { realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readConfig } from "../../config/config.js";
import type { AttentionItem } from "../../contract/attention.js";
import { parseDirectDelivery } from "../../contract/direct-delivery.js";
import { isSid, type Sid } from "../../contract/identifiers.js";
import type { InboxMessage } from "../../contract/messaging.js";
import { RESERVATIONS_NS } from "../../contract/reservations.js";
import { editAnswer } from "../../harness/edit-answer.js";
import {
  type HookAnswer,
  type PromptHandOver,
  payloadString,
  promptAnswer,
} from "../../harness/hook-answers.js";
import { readPermissionRequest } from "../../harness/permission-request.js";
import { configFile } from "../../state/paths.js";
import { ShownLedger } from "../../state/shown-ledger.js";
import type { Clock } from "../../util/clock.js";
import type { Attention } from "../attention/engine.js";
import type { Kv } from "../kv/kv.js";
import type { Messaging } from "../messaging/engine.js";
import type { Sessions } from "../sessions/sessions.js";

/** Whose hook asks: the answer's shape and the item's harness follow it. */
export type Harness = AttentionItem["harness"];

/** What the hook answers read, in-process. */
export interface HookAnswersDeps {
  messaging: Pick<Messaging, "handOverHere">;
  /** The attention queue: a PermissionRequest waits there (DR-0062). */
  attention: Pick<Attention, "ask" | "typed">;
  kv: Pick<Kv, "list">;
  sessions: Pick<Sessions, "touch">;
  clock: Clock;
  stateDir: string;
  /** The instance's environment: where ccmsg's config is. */
  env: NodeJS.ProcessEnv;
}

/** The prompt hook answers nothing past this, before confirming (the
 * command hook's deadline; Claude Code gives up at SYNC_HOOK_TIMEOUT_S). */
const PROMPT_DEADLINE_MS = 3000;

/**
 * Claude Code's hot hooks answered by the instance itself (DR-0058), with
 * the command hooks' rules (harness/hook-answers.ts) over the engines
 * instead of the socket: no process, no connection, no round trip. The
 * session is the payload's `session_id`; the hook token that let the
 * request in is the proof, as the socket's mode is for a command hook.
 */
export class HookAnswers {
  constructor(private readonly deps: HookAnswersDeps) {}

  /** The answer to one hook's payload; undefined = none (`{}`). `gone`
   * aborts when the hook's request goes away unanswered. */
  answer(
    payload: Record<string, unknown>,
    gone: AbortSignal,
    harness: Harness = "claude",
  ): Promise<HookAnswer> {
    const event = payload.hook_event_name;
    if (event === "PermissionRequest") return this.permission(payload, gone, harness);
    // Codex's other hooks are command hooks with rules of their own; its
    // prompt hook only says a prompt was submitted.
    if (harness !== "claude") {
      if (event === "UserPromptSubmit") this.submitted(payload);
      return Promise.resolve(undefined);
    }
    if (event === "UserPromptSubmit") return this.prompt(payload);
    if (event === "PreToolUse") return this.edit(payload);
    return Promise.resolve(undefined);
  }

  /** Held until a person decides, the terminal answers, the hold runs out
   * or the hook goes away (DR-0062). */
  private async permission(payload: Record<string, unknown>, gone: AbortSignal, harness: Harness) {
    const ask = readPermissionRequest(payload);
    if (ask === undefined || !isSid(ask.sid)) return undefined;
    this.deps.sessions.touch(ask.sid);
    return (await this.deps.attention.ask(ask, harness, gone)) as HookAnswer;
  }

  /** A prompt submitted at the session's terminal: the person is there
   * (DR-0062) — unless it is a message ccmsg put in as one (the contract's
   * rendering, as `codex queue` submits it). */
  private submitted(payload: Record<string, unknown>): Sid | undefined {
    const sid = sidOf(payload);
    if (sid === undefined) return undefined;
    this.deps.sessions.touch(sid);
    const prompt = payloadString(payload, "prompt");
    if (prompt === undefined || parseDirectDelivery(prompt) === undefined)
      this.deps.attention.typed(sid);
    return sid;
  }

  private async prompt(payload: Record<string, unknown>): Promise<HookAnswer> {
    const sid = this.submitted(payload);
    if (sid === undefined) return undefined;
    const started = Date.now();
    const here = this.deps.messaging.handOverHere(sid);
    try {
      const handOver: PromptHandOver = {
        claim: async () => here.claimed,
        confirm: async (messages: InboxMessage[]) => {
          const mids = messages.map((m) => m.mid);
          // In-process the answer always comes: recorded, or held again.
          return (await here.confirm(mids)).length === mids.length ? "recorded" : "refused";
        },
      };
      return await promptAnswer(
        handOver,
        ShownLedger.of({ "state-dir": this.deps.stateDir }, sid),
        payload,
        () => Date.now() - started < PROMPT_DEADLINE_MS,
      );
    } finally {
      here.release();
    }
  }

  private edit(payload: Record<string, unknown>): Promise<HookAnswer> {
    const { kv, env, clock } = this.deps;
    return editAnswer(
      {
        entries: async () => kv.list(RESERVATIONS_NS),
        real: realAsFarAsExists,
        // Read per call, as the command hook does: an edit needs no restart.
        blocking: async () =>
          (await readConfig(configFile(undefined, env))).reservations?.on_conflict === "block",
      },
      payload,
      sidOf(payload) ?? null,
      "/",
      () => clock.now(),
    );
  }
}

function sidOf(payload: Record<string, unknown>): Sid | undefined {
  const sid = payloadString(payload, "session_id");
  return isSid(sid) ? sid : undefined;
}

/** client/reservations.ts's realAsFarAsExists without blocking. */
async function realAsFarAsExists(path: string): Promise<string> {
  const tail: string[] = [];
  for (let head = path; ; ) {
    try {
      return join(await realpath(head), ...tail.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return path;
      tail.push(head.slice(up.length).replace(/^\//, ""));
      head = up;
    }
  }
}
