import { type ParseArgsConfig, parseArgs } from "node:util";
import { type Flags, UsageError } from "../client/flags.js";
import { SidRefusal } from "../client/sid-refusal.js";
import { ContractError } from "../contract/errors.js";

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

/** Parse a command's argv with the options every command shares. (`_usage`,
 * the command's synopsis, is kept for the callers' sake: a usage error now
 * points at `ccmsg help <command>`, which shows all of it.) */
export function parse<O extends Options>(
  argv: string[],
  options: O,
  _usage: string,
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
    throw new UsageError(parseFailure(error as Error & { code?: string }));
  }
}

/** node's parseArgs messages, shortened to what went wrong (its advice about
 * `--` is rarely what a person meant). */
function parseFailure(error: Error & { code?: string }): string {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (option === undefined) return error.message;
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return error.message.includes("argument missing")
        ? `${option} needs a value`
        : `${option} takes no value`;
    default:
      return error.message;
  }
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

/** Whether a failure is reported as JSON: with `--json`, or when stderr is
 * not a terminal (hooks and agents parse it); `--text` or a terminal gets one
 * readable line. Read from the raw argv, as the failure may be the parse. */
export function errorsAsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  const options = end === -1 ? argv : argv.slice(0, end);
  if (options.includes("--json")) return true;
  if (options.includes("--text")) return false;
  return !process.stderr.isTTY;
}

/** Report a failure on stderr and exit 1: `{"error":{"code","msg"}}` (with
 * `candidates` when a session argument was ambiguous), or for
 * a person `ccmsg <command>: <what went wrong>` on one line. A failure without
 * a contract code is `internal_error`. A usage error points at the help. */
export function fail(error: unknown, json: boolean, command?: string): never {
  const code = error instanceof ContractError ? error.code : "internal_error";
  let msg = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError && command !== undefined)
    msg = `${msg} (see ccmsg help ${command})`;
  // The sessions an ambiguous session argument could mean, for a program to pick.
  const more =
    error instanceof SidRefusal && error.candidates.length > 0
      ? { candidates: error.candidates }
      : {};
  if (json) process.stderr.write(`${JSON.stringify({ error: { code, msg, ...more } })}\n`);
  else {
    const line = msg
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("; ");
    process.stderr.write(`ccmsg${command === undefined ? "" : ` ${command}`}: ${line}\n`);
  }
  process.exit(1);
}
