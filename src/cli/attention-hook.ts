import { request } from "node:http";
import { claimForHarness } from "../client/hook-payload.js";
import { hookRouteUrl } from "../client/hook-route.js";
import { CODEX_HOOK_PATH, HOOK_PATH } from "../harness/plugin/claude-paths.js";
import { readHookToken } from "../state/hook-token.js";
import { resolveStateDir } from "../state/paths.js";
import { readStdinJson } from "./stdin.js";

// `ccmsg attention --hook`: a PermissionRequest command hook (DR-0062) —
// Codex's (command hooks only), and Claude Code's where the instance serves
// no HTTP. The payload goes to the instance's hook route as the http hook's
// does, and the answer is printed as the harness reads it. The instance holds
// the request until a person decides or the hold runs out; every failure
// prints nothing and exits 0, which leaves the harness's own dialog.

const STDIN_DEADLINE_MS = 3000;

export async function attentionHook(
  values: { "state-dir"?: string },
  harness: "claude" | "codex",
): Promise<void> {
  let payload: Record<string, unknown>;
  try {
    payload = await readStdinJson(STDIN_DEADLINE_MS);
  } catch {
    return;
  }
  claimForHarness(harness, payload);
  const stateDir = resolveStateDir(values["state-dir"]);
  const url = hookRouteUrl(stateDir, harness === "codex" ? CODEX_HOOK_PATH : HOOK_PATH, false);
  const token = readHookToken(stateDir);
  if (url === undefined || token === undefined) return;
  const answer = await post(url, token, JSON.stringify(payload)).catch(() => undefined);
  if (answer !== undefined && answer.trim() !== "{}") process.stdout.write(`${answer.trim()}\n`);
}

/** POST `body`; the answer's text on a 2xx. node:http rather than fetch:
 * fetch gives up on an answer's headers after 300 s, and a hold is longer. */
function post(url: string, token: string, body: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve(
            (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
              ? Buffer.concat(chunks).toString("utf8")
              : undefined,
          ),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
