import type { FastifyInstance } from "fastify";
import { editHookAnswer, type HookAnswer, promptHookAnswer } from "../../client/hook-answers.js";
import { isHookToken, loadOrMintHookToken } from "../../state/hook-token.js";
import { HOOK_PATH } from "./hook-path.js";
import { refusal } from "./owner-auth.js";

// Claude Code's hot hooks answered by the instance itself (DR-0058):
// UserPromptSubmit and PreToolUse as `type: "http"` hooks POST their payload
// here instead of starting a process. The answers are the command hooks'
// (client/hook-answers.ts), asked of this instance's own socket, so the
// claim/confirm and shown-ledger rules are the same code. Every failure
// answers `{}`: the prompt or the edit goes on, as with the command hooks.

export interface HookRouteOptions {
  stateDir: string;
}

/** The prompt hook answers nothing past this, before confirming (the
 * command hook's deadline; Claude Code gives up at SYNC_HOOK_TIMEOUT_S). */
const PROMPT_DEADLINE_MS = 3000;

const WRONG_TOKEN = refusal(
  401,
  "auth_invalid",
  "the hook route answers the plugin's hooks only: send `Authorization: Bearer <state dir>/hook-token`",
);

export async function hookRoutePlugin(app: FastifyInstance, o: HookRouteOptions): Promise<void> {
  const token = loadOrMintHookToken(o.stateDir);
  const flags = { "state-dir": o.stateDir };
  app.post(HOOK_PATH, async (req, reply) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!isHookToken(token, bearer))
      return reply.code(WRONG_TOKEN.status).headers(WRONG_TOKEN.headers).send(WRONG_TOKEN.body);
    const payload =
      typeof req.body === "object" && req.body !== null
        ? (req.body as Record<string, unknown>)
        : {};
    let out: HookAnswer;
    try {
      out = await answer(flags, payload);
    } catch {
      out = undefined;
    }
    return reply.code(200).send(out ?? {});
  });
}

function answer(flags: { "state-dir": string }, payload: Record<string, unknown>) {
  const event = payload.hook_event_name;
  if (event === "PreToolUse") return editHookAnswer(flags, payload, "/");
  if (event !== "UserPromptSubmit") return Promise.resolve(undefined);
  const started = Date.now();
  return promptHookAnswer(flags, payload, () => Date.now() - started < PROMPT_DEADLINE_MS);
}
