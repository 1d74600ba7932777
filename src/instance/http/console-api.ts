import { execFile } from "node:child_process";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { INBOX_RETENTION_MS } from "../../contract/constants.js";
import { isSid } from "../../contract/identifiers.js";
import type { InboxStore } from "../../store/inbox.js";
import { sendJson } from "./json-reply.js";

/**
 * What the web console reads beside the wire contract (this implementation's
 * business, not contract; DR-0031), under `/api/console/`:
 *
 * - `GET  held`                  → `{ counts: { <sid>: n } }` messages held per recipient
 * - `GET  held/:sid`             → `{ messages: InboxMessage[] }` held for one, oldest first
 * - `GET  sessions/:sid/hud`     → the session's `ecc.hud-status.v1` payload
 * - `GET  sessions/:sid/diff`    → its worktree's diff (`ccmsg session diff --json`)
 * - `POST sessions/:sid/resume`  → resume it (`ccmsg session resume --json`)
 *
 * The HUD and the controls read git, gh and the harness's files: they run as
 * the instance's own command in a child process (the same code `ccmsg hud`
 * runs), so none of that work — synchronous file reads, a slow `gh` —
 * happens on the instance's event loop. At most two run at once; a few more
 * wait, and beyond that the answer is 503 "busy, retry".
 *
 * Every route sits behind the Host, Origin and owner checks of the gate (gate.ts).
 */
export interface ConsoleApiDeps {
  inbox: InboxStore;
  /** The instance clock (held messages expire by it). */
  now(): number;
  stateDir: string;
  /** How to run this instance's own command; default: the interpreter and
   * script running now (`node dist/bin/ccmsg.js daemon run`). */
  command?: { node: string; script: string };
}

/** A child that runs longer is stopped and answered 504. */
const COMMAND_TIMEOUT_MS = 30_000;
const COMMAND_SLOTS = 2;
const COMMAND_QUEUE = 8;
const OUTPUT_LIMIT = 8 * 1024 * 1024;

export async function consoleApiPlugin(app: FastifyInstance, deps: ConsoleApiDeps) {
  await app.register(
    (api, _opts, done) => {
      routes(api, deps);
      done();
    },
    { prefix: "/api/console" },
  );
}

function routes(app: FastifyInstance, deps: ConsoleApiDeps): void {
  const run = commandRunner(deps);
  app.setNotFoundHandler((_req, reply) => sendJson(reply, 404, { ok: false, error: "not found" }));

  app.get("/held", async (_req, reply) =>
    sendJson(reply, 200, { counts: deps.inbox.heldBySid(deps.now(), INBOX_RETENTION_MS) }),
  );

  app.get("/held/:sid", async (req, reply) => {
    const sid = sidOf(req);
    if (sid === undefined) return badSid(reply);
    // After every accepted write commits, so a message just sent is listed.
    const held = await deps.inbox.peekHeldLater(sid, deps.now, INBOX_RETENTION_MS);
    return sendJson(reply, 200, { messages: held.map((h) => h.message) });
  });

  app.get("/sessions/:sid/hud", async (req, reply) => {
    const sid = sidOf(req);
    if (sid === undefined) return badSid(reply);
    return answer(reply, await run(["hud", "--sid", sid, "--json"]));
  });

  app.get("/sessions/:sid/diff", async (req, reply) => {
    const sid = sidOf(req);
    if (sid === undefined) return badSid(reply);
    return answer(reply, await run(["session", "diff", "--sid", sid, "--json"]));
  });

  app.post("/sessions/:sid/resume", async (req, reply) => {
    // Like the board's mutations: only a JSON body, which no foreign page can
    // send without a preflight (the Origin check is the first wall).
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json")
      return sendJson(reply, 415, {
        ok: false,
        error: "this route takes an application/json body",
      });
    const sid = sidOf(req);
    if (sid === undefined) return badSid(reply);
    return answer(reply, await run(["session", "resume", "--sid", sid, "--json"]));
  });
}

type RunResult =
  | { kind: "ok"; value: unknown }
  | { kind: "refused"; code: string; msg: string }
  | { kind: "busy" }
  | { kind: "failed"; msg: string };

/** Run `ccmsg <args> --state-dir <dir>`, at most COMMAND_SLOTS at once. */
function commandRunner(deps: ConsoleApiDeps): (args: string[]) => Promise<RunResult> {
  const command = deps.command ?? { node: process.execPath, script: process.argv[1] ?? "" };
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  const once = (args: string[]) =>
    new Promise<RunResult>((resolve) => {
      execFile(
        command.node,
        [command.script, ...args, "--state-dir", deps.stateDir, "--no-start"],
        { timeout: COMMAND_TIMEOUT_MS, maxBuffer: OUTPUT_LIMIT, env: process.env },
        (error, stdout, stderr) => {
          if (error === null) {
            try {
              return resolve({ kind: "ok", value: JSON.parse(stdout) });
            } catch {
              return resolve({ kind: "failed", msg: "the command printed no JSON" });
            }
          }
          // The CLI's refusals: `{"error":{"code","msg"}}` on stderr (not a terminal).
          try {
            const body = JSON.parse(stderr) as { error?: { code?: string; msg?: string } };
            if (body.error?.code !== undefined)
              return resolve({ kind: "refused", code: body.error.code, msg: body.error.msg ?? "" });
          } catch {}
          resolve({
            kind: "failed",
            msg: error.killed ? "the command took too long" : stderr.trim().slice(0, 2000),
          });
        },
      );
    });
  return async (args) => {
    if (running >= COMMAND_SLOTS) {
      if (waiting.length >= COMMAND_QUEUE) return { kind: "busy" };
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    running++;
    try {
      return await once(args);
    } finally {
      release();
    }
  };
}

/** A refusal keeps the CLI's contract code; the status says who is at fault. */
function answer(reply: FastifyReply, r: RunResult) {
  switch (r.kind) {
    case "ok":
      return sendJson(reply, 200, r.value);
    case "refused": {
      const status =
        r.code === "session_not_found" || r.code === "not_found"
          ? 404
          : r.code === "capability_unavailable"
            ? 409
            : r.code === "internal_error"
              ? 500
              : 400;
      return sendJson(reply, status, { ok: false, code: r.code, error: r.msg });
    }
    case "busy":
      reply.header("retry-after", "1");
      return sendJson(reply, 503, { ok: false, code: "busy", error: "too many requests running" });
    case "failed":
      return sendJson(reply, 500, { ok: false, code: "internal_error", error: r.msg });
  }
}

function sidOf(req: FastifyRequest): string | undefined {
  const { sid } = req.params as { sid?: string };
  return isSid(sid) ? sid : undefined;
}

function badSid(reply: FastifyReply) {
  return sendJson(reply, 400, { ok: false, error: "a session id is a lower-case UUID" });
}
