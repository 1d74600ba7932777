import { request } from "node:http";
import { readHookToken } from "../state/hook-token.js";
import { hookRouteUrl } from "./hook-route.js";

// A command hook's payload posted to the instance's hook route (DR-0058) with
// the hook token, for the hooks a harness runs only as commands (Codex's).
// Apart from hook-route.ts: node:http loads only for the hooks that post.

/** POST `payload` to the hook route `path`; the answer's text on a 2xx,
 * undefined when there is no instance serving HTTP, no token, or a refusal.
 * node:http rather than fetch: fetch gives up on an answer's headers after
 * 300 s, and an attention hold may be longer. */
export async function postToHookRoute(
  stateDir: string,
  path: string,
  payload: unknown,
): Promise<string | undefined> {
  const url = hookRouteUrl(stateDir, path, false);
  const token = readHookToken(stateDir);
  if (url === undefined || token === undefined) return undefined;
  const body = JSON.stringify(payload);
  return new Promise((resolve) => {
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
        res.on("end", () => {
          const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
          resolve(ok ? Buffer.concat(chunks).toString("utf8") : undefined);
        });
        res.on("error", () => resolve(undefined));
      },
    );
    req.on("error", () => resolve(undefined));
    req.end(body);
  });
}
