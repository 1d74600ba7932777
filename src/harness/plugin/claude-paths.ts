import { join } from "node:path";

/** Where the Claude Code plugin is generated (a local marketplace) and the
 * receipt of what its install placed, under the state directory. */
export const claudePluginDir = (stateDir: string) => join(stateDir, "plugins", "claude");
export const claudeReceiptPath = (stateDir: string) =>
  join(stateDir, "plugins", "claude-receipt.json");
