import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The MCP server's JSON Schema validator, in place of the SDK's default one
 * (ajv with its formats, ~230 KB compiled and a meta-schema compile at every
 * start). The SDK asks it only to check what a client answers to an
 * elicitation, which ccmsg's server never sends: tool arguments are checked
 * against the TypeBox schemas by the contract's own validator (server.ts).
 * The build puts this module where the SDK imports its ajv provider
 * (scripts/build.mjs), so `ccmsg mcp` does not load ajv at all (DR-0068).
 */
export class NoJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(_schema: JsonSchemaType): JsonSchemaValidator<T> {
    return () => ({
      valid: false,
      data: undefined,
      errorMessage: "ccmsg's MCP server checks no JSON Schema: it sends no elicitation",
    });
  }
}

/** The name the SDK imports from the module this one stands in for. */
export { NoJsonSchemaValidator as AjvJsonSchemaValidator };
