import { ContractError } from "../contract/errors.js";
import type { Command } from "./command.js";
import { parse } from "./options.js";

/** `ccmsg mcp` — the MCP server on stdio, speaking as the session from the
 * environment; `--print-config claude|codex` prints how to register it. The
 * SDK is loaded only here, and only to serve. */
export const mcp: Command = async (argv) => {
  const { values } = parse(
    argv,
    { "print-config": { type: "string" } },
    "ccmsg mcp [--print-config claude|codex]",
  );
  const harness = values["print-config"];
  if (harness !== undefined) {
    if (harness !== "claude" && harness !== "codex")
      throw new ContractError("invalid_args", "--print-config takes claude or codex");
    const { mcpConfig, mcpLaunch } = await import("../mcp/config.js");
    const explicit = values["state-dir"] ?? process.env.CCMSG_STATE_DIR;
    process.stdout.write(mcpConfig(harness, mcpLaunch(explicit)));
    return;
  }
  const { serveMcp } = await import("../mcp/server.js");
  await serveMcp(values);
  process.exit(0);
};
