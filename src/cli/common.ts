import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { Client, ClientError } from "../client/client.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { sessionIdFrom } from "../identity.js";
import { resolveStateDir, stateFiles } from "../paths.js";

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

/** A refusal the CLI reports: printed as `{"error":{"code","msg"}}` on stderr
 * with exit status 1. Codes are the contract's. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

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
    throw new CliError("invalid_args", `${(error as Error).message}\nusage: ${usage}`);
  }
}

type Flags = {
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

export function fail(error: unknown): never {
  const code =
    error instanceof CliError || error instanceof ClientError ? error.code : "internal_error";
  const msg = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${JSON.stringify({ error: { code, msg } })}\n`);
  process.exit(1);
}

/**
 * Connect to the instance of the state directory; when none answers, start one
 * in the background and proceed (`--no-start` refuses instead).
 */
export async function connectInstance(flags: Flags): Promise<Client> {
  const stateDir = resolveStateDir(flags["state-dir"]);
  const { socket } = stateFiles(stateDir);
  try {
    return await Client.connectUnix(socket);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ECONNREFUSED") throw error;
  }
  if (flags["no-start"]) {
    throw new CliError(
      "instance_unreachable",
      `no instance answers at ${socket} (and --no-start was given)`,
    );
  }
  await startDaemon(stateDir);
  return Client.connectUnix(socket);
}

/** Spawn `ccmsg daemon run` detached and wait until its socket accepts. */
export async function startDaemon(stateDir: string, http?: string): Promise<void> {
  const { socket, log } = stateFiles(stateDir);
  // Re-run the very entry script this CLI was started from (dist or bundle).
  const args = [process.argv[1]!, "daemon", "run", "--state-dir", stateDir];
  if (http !== undefined) args.push("--http", http);
  const { mkdirSync } = await import("node:fs");
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const out = openSync(`${log}.out`, "a");
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", out, out] });
  let exited: number | null = null;
  child.on("exit", (code) => {
    exited = code ?? 1;
  });
  child.unref();
  const deadline = Date.now() + 10_000;
  for (let wait = 5; Date.now() < deadline; wait = Math.min(wait * 2, 100)) {
    if (exists(socket)) {
      try {
        (await Client.connectUnix(socket)).close();
        return;
      } catch {}
    }
    if (exited !== null && exited !== 0) break;
    await new Promise((r) => setTimeout(r, wait));
  }
  const tail = readTail(`${log}.out`);
  throw new CliError(
    "instance_unreachable",
    `the instance did not start${tail ? `: ${tail}` : ""}`,
  );
}

function exists(path: string): boolean {
  return existsSync(path);
}

function readTail(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" ").slice(-500);
  } catch {
    return "";
  }
}

/** Greet as the session when one is known, else as the person. The greeting
 * is sent without waiting: the instance holds later frames until it settles. */
export function greet(client: Client, sid: string | undefined, meta: Record<string, unknown> = {}) {
  const hello = client.request("hello", {
    role: sid === undefined ? "user" : "session",
    protocol_version: PROTOCOL_VERSION,
    ...(sid === undefined ? {} : { sid, ...meta }),
    client_version: "ccmsg-cli",
  });
  return hello.then((reply) => {
    if (!reply.ok) throw new ClientError(reply.error!.code, reply.error!.msg);
    return reply;
  });
}

/** Greet, then call `op`, in one round trip; the greeting's refusal wins. */
export async function callAs(
  client: Client,
  sid: string | undefined,
  op: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const greeting = greet(client, sid);
  const call = client.call(op, args);
  // When the greeting is refused the call fails too; report the greeting.
  call.catch(() => {});
  await greeting;
  return call;
}

/** Read the whole of stdin as JSON (hook payloads), with a deadline. */
export async function readStdinJson(deadlineMs: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  const read = new Promise<void>((resolve) => {
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", resolve);
    process.stdin.on("error", resolve);
  });
  await Promise.race([read, new Promise((r) => setTimeout(r, deadlineMs).unref())]);
  process.stdin.destroy();
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  const value = JSON.parse(text) as unknown;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}
