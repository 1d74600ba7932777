import type { FastifyInstance } from "fastify";
import type { HookAnswer } from "../../harness/hook-answers.js";
import { CODEX_HOOK_PATH, HOOK_PATH } from "../../harness/plugin/claude-paths.js";
import { isHookToken, loadOrMintHookToken } from "../../state/hook-token.js";
import type { Harness, HookAnswers } from "../hooks/answers.js";
import { refusal } from "./owner-auth.js";

// Claude Code's hot hooks answered by the instance itself (DR-0058):
// UserPromptSubmit, PreToolUse and PermissionRequest as `type: "http"` hooks
// POST their payload here instead of starting a process; Codex's
// PermissionRequest comes through `ccmsg attention --hook` to its own path.
// The answers are computed in-process (hooks/answers.ts) with the command
// hooks' rules. Every failure answers `{}`: the prompt or the edit goes on,
// and a permission dialog stays, as with the command hooks.

export interface HookRouteOptions {
  stateDir: string;
  hooks: Pick<HookAnswers, "answer">;
}

const WRONG_TOKEN = refusal(
  401,
  "auth_invalid",
  "the hook route answers the plugin's hooks only: send `Authorization: Bearer <state dir>/hook-token`",
);

export async function hookRoutePlugin(app: FastifyInstance, o: HookRouteOptions): Promise<void> {
  const token = loadOrMintHookToken(o.stateDir);
  const route = (path: string, harness: Harness) =>
    app.post(path, async (req, reply) => {
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
      if (!isHookToken(token, bearer))
        return reply.code(WRONG_TOKEN.status).headers(WRONG_TOKEN.headers).send(WRONG_TOKEN.body);
      const payload =
        typeof req.body === "object" && req.body !== null
          ? (req.body as Record<string, unknown>)
          : {};
      // A hook that holds (PermissionRequest) hears when the harness gave up
      // on it: its timeout, or the session's end.
      const gone = new AbortController();
      reply.raw.on("close", () => {
        if (!reply.raw.writableEnded) gone.abort();
      });
      let out: HookAnswer;
      try {
        out = await o.hooks.answer(payload, gone.signal, harness);
      } catch {
        out = undefined;
      }
      return reply.code(200).send(out ?? {});
    });
  route(HOOK_PATH, "claude");
  route(CODEX_HOOK_PATH, "codex");
}
