import { claimForHarness } from "../client/hook-payload.js";
import { postToHookRoute } from "../client/hook-route-post.js";
import { CODEX_HOOK_PATH, HOOK_PATH } from "../harness/plugin/claude-paths.js";
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
  const path = harness === "codex" ? CODEX_HOOK_PATH : HOOK_PATH;
  const answer = await postToHookRoute(stateDir, path, payload);
  if (answer !== undefined && answer.trim() !== "{}") process.stdout.write(`${answer.trim()}\n`);
}
