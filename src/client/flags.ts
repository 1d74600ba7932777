import { ContractError } from "../contract/errors.js";
import { sessionIdFrom } from "../harness/identity.js";

// What every client of the instance is told by its caller (the CLI's global
// options, the MCP server's arguments): where the instance lives, whether it
// may be started, and which session it speaks for.

export type Flags = {
  json?: boolean;
  text?: boolean;
  sid?: string;
  "state-dir"?: string;
  "no-start"?: boolean;
};

/** Who the client speaks as (see harness/identity.ts). */
export function sessionId(flags: Flags, env = process.env): string | undefined {
  return sessionIdFrom(flags.sid, env);
}

/** Input the caller cannot use: `invalid_args`; the CLI points the person at
 * the command's help. */
export class UsageError extends ContractError {
  constructor(msg: string) {
    super("invalid_args", msg);
  }
}
