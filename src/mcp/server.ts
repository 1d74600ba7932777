import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { type Flags, sessionId } from "../client/flags.js";
import { ContractError } from "../contract/errors.js";
import { VERSION } from "../util/version.js";
import { NoJsonSchemaValidator } from "./json-schema-validator.js";
import { SessionLink } from "./link.js";
import { TOOLS } from "./tools.js";

// `ccmsg mcp`: the tools of tools.ts over stdio, with the SDK's low-level
// Server (DR-0020: our schemas are TypeBox, checked by the contract's own
// validator, so a refusal carries the contract code like every other one).
// Nothing but the protocol may reach stdout.

/** Serve until the client closes stdin. */
export async function serveMcp(flags: Flags): Promise<void> {
  const link = new SessionLink(flags, sessionId(flags));
  const person = new SessionLink(flags, undefined);
  const server = new Server(
    { name: "ccmsg", version: VERSION },
    { capabilities: { tools: {} }, jsonSchemaValidator: new NoJsonSchemaValidator() },
  );
  // JSON Schema as the model reads it (TypeBox's symbol keys fall away).
  const tools = Object.entries(TOOLS).map(([name, t]) => ({
    name,
    description: t.description,
    inputSchema: JSON.parse(JSON.stringify(t.input)),
  }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }): Promise<CallToolResult> => {
    const tool = Object.hasOwn(TOOLS, params.name) ? TOOLS[params.name] : undefined;
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool ${params.name}`);
    const args = params.arguments ?? {};
    // The schema compiler is loaded at the first call, not at the start
    // Claude Code waits for.
    const { validationErrors } = await import("../contract/validate.js");
    const refused = validationErrors(tool.input, args);
    if (refused.length > 0) return failure("invalid_args", refused.join("; "));
    try {
      return { content: [{ type: "text", text: await tool.run(args, { link, person, flags }) }] };
    } catch (error) {
      if (error instanceof ContractError) return failure(error.code, error.message);
      return failure("internal_error", error instanceof Error ? error.message : String(error));
    }
  });
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    transport.onclose = resolve;
  });
  await server.connect(transport);
  await ended;
  link.close();
  person.close();
  await server.close();
}

/** A tool failure as MCP carries it: `isError`, the contract code first. */
function failure(code: string, msg: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `${code}: ${msg}` }] };
}
