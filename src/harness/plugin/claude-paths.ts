import { join } from "node:path";

/** Where the Claude Code plugin is generated (a local marketplace) and the
 * receipt of what its install placed, under the state directory. */
export const claudePluginDir = (stateDir: string) => join(stateDir, "plugins", "claude");
export const claudeReceiptPath = (stateDir: string) =>
  join(stateDir, "plugins", "claude-receipt.json");

/** The instance's route for the plugin's http hooks (DR-0058); Claude Code's
 * event is in the body. */
export const HOOK_PATH = "/hooks/claude";
/** The same route for Codex's PermissionRequest, which `ccmsg attention
 * --hook --harness codex` posts to (Codex runs command hooks only). */
export const CODEX_HOOK_PATH = "/hooks/codex";
