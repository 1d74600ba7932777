import { realpathSync } from "node:fs";
import { codexConfigHome } from "../state/paths.js";

// `ccmsg mcp --print-config claude|codex`: how each harness registers the
// server (harness spec §9). The command is this very install, by absolute
// path, so the registration does not depend on the harness's PATH.

export type McpHarness = "claude" | "codex";

export interface McpLaunch {
  command: string;
  args: string[];
}

/** node and this install's entry script, then `mcp` and its options. */
export function mcpLaunch(stateDir: string | undefined): McpLaunch {
  const script = realpathSync(process.argv[1]!);
  const args = [script, "mcp"];
  if (stateDir !== undefined) args.push("--state-dir", stateDir);
  return { command: process.execPath, args };
}

/** Variables Codex must pass on: it starts MCP servers with a cleared
 * environment (only HOME, PATH, USER and a few more survive), and these
 * decide the instance and the session. A Codex that does not set the thread
 * variables for MCP servers leaves the server speaking as nobody: the tools
 * that act as a session then say so. */
const CODEX_FORWARDED = [
  "CODEX_THREAD_ID",
  "CODEX_SESSION_ID",
  "CCMSG_STATE_DIR",
  "CCMSG_CONFIG_DIR",
  "XDG_STATE_HOME",
  "XDG_CONFIG_HOME",
  "XDG_RUNTIME_DIR",
];

/**
 * The registration snippet: for Claude Code the `.mcp.json` document (the
 * same entry `claude mcp add` writes; the server inherits Claude Code's
 * environment, CLAUDE_CONFIG_DIR and the session id among it); for Codex the
 * `config.toml` table `[mcp_servers.ccmsg]`, naming its config home.
 */
export function mcpConfig(
  harness: McpHarness,
  launch: McpLaunch,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (harness === "claude") {
    const entry = { type: "stdio", command: launch.command, args: launch.args };
    return `${JSON.stringify({ mcpServers: { ccmsg: entry } }, null, 2)}\n`;
  }
  const codexHome = codexConfigHome(env);
  const toml = (v: string) => JSON.stringify(v);
  const list = (vs: string[]) => `[${vs.map(toml).join(", ")}]`;
  return [
    "[mcp_servers.ccmsg]",
    `command = ${toml(launch.command)}`,
    `args = ${list(launch.args)}`,
    `env_vars = ${list(CODEX_FORWARDED)}`,
    "",
    "[mcp_servers.ccmsg.env]",
    `CODEX_HOME = ${toml(codexHome)}`,
    "",
  ].join("\n");
}
