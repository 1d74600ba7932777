import { type ParseArgsConfig, parseArgs } from "node:util";
import { ContractError, contractError } from "../contract/errors.js";
import { sessionIdFrom } from "../harness/identity.js";

// What every command shares: its options, who it speaks as, how it prints.

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  json: { type: "boolean" },
  text: { type: "boolean" },
  sid: { type: "string" },
  "state-dir": { type: "string" },
  "no-start": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parsed option values: strings for string options, booleans otherwise. */
export type Values<O> = { [K in keyof O]?: O[K] extends { type: "string" } ? string : boolean };

export function parse<O extends Options>(
  argv: string[],
  options: O,
  usage: string,
): { values: Values<typeof GLOBAL_OPTIONS & O>; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
    return parsed as { values: Values<typeof GLOBAL_OPTIONS & O>; positionals: string[] };
  } catch (error) {
    throw contractError("invalid_args", `${(error as Error).message}\nusage: ${usage}`);
  }
}

export type Flags = {
  json?: boolean;
  text?: boolean;
  sid?: string;
  "state-dir"?: string;
  "no-start"?: boolean;
};

/** Who the CLI speaks as (see identity.ts). */
export function sessionId(flags: Flags, env = process.env): string | undefined {
  return sessionIdFrom(flags.sid, env);
}

/** JSON with `--json`, or when stdout is not a terminal (hooks and agents
 * parse it); readable text on a terminal or with `--text`. */
export function wantsJson(flags: Flags): boolean {
  if (flags.json) return true;
  if (flags.text) return false;
  return !process.stdout.isTTY;
}

export function print(flags: Flags, value: unknown, text: () => string): void {
  process.stdout.write(wantsJson(flags) ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}

/** Report a failure on stderr as `{"error":{"code","msg"}}` and exit 1. A
 * failure without a contract code is `internal_error`. */
export function fail(error: unknown): never {
  const code = error instanceof ContractError ? error.code : "internal_error";
  const msg = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${JSON.stringify({ error: { code, msg } })}\n`);
  process.exit(1);
}
