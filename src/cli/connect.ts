import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { type ArgsOf, Client } from "../client/client.js";
import type { OpName } from "../contract/attributes.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { contractError } from "../contract/errors.js";
import type { SessionMeta } from "../contract/peers.js";
import type { OpResult } from "../contract/schemas.js";
import { resolveStateDir, stateFiles } from "../paths.js";
import { ensureStateDir } from "../state-dir.js";
import type { Flags } from "./options.js";
import { derivedMeta } from "./session-meta.js";

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
    throw contractError(
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
  ensureStateDir(stateDir);
  const out = openSync(`${log}.out`, "a", 0o600);
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", out, out] });
  let exited: number | null = null;
  child.on("exit", (code) => {
    exited = code ?? 1;
  });
  child.unref();
  const deadline = Date.now() + 10_000;
  for (let wait = 5; Date.now() < deadline; wait = Math.min(wait * 2, 100)) {
    if (existsSync(socket)) {
      try {
        (await Client.connectUnix(socket)).close();
        return;
      } catch {}
    }
    if (exited !== null && exited !== 0) break;
    await new Promise((r) => setTimeout(r, wait));
  }
  const tail = readTail(`${log}.out`);
  throw contractError(
    "instance_unreachable",
    `the instance did not start${tail ? `: ${tail}` : ""}`,
  );
}

function readTail(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" ").slice(-500);
  } catch {
    return "";
  }
}

/** Greet as the session when one is known — with the meta every greeting of
 * a session carries (session-meta.ts), unless `meta` is given — else as the
 * person. Resolves once the greeting is sent, with its reply still to come:
 * the instance holds later frames until the greeting settles. */
export async function sendGreeting(
  client: Client,
  sid: string | undefined,
  meta?: SessionMeta,
): Promise<{ reply: Promise<OpResult<"hello">> }> {
  const who = sid === undefined ? { role: "user" as const } : { role: "session" as const, sid };
  const announced = sid === undefined ? {} : (meta ?? (await derivedMeta()));
  const reply = client.call("hello", {
    ...who,
    ...announced,
    protocol_version: PROTOCOL_VERSION,
    client_version: "ccmsg-cli",
  });
  return { reply };
}

/** Greet (see sendGreeting) and wait for the reply. */
export async function greet(
  client: Client,
  sid: string | undefined,
  meta?: SessionMeta,
): Promise<OpResult<"hello">> {
  return (await sendGreeting(client, sid, meta)).reply;
}

/** Greet (with `meta` when given), then call `op`, in one round trip; the
 * greeting's refusal wins. */
export async function callAs<Op extends OpName>(
  client: Client,
  sid: string | undefined,
  op: Op,
  args: ArgsOf<Op>[0],
  meta?: SessionMeta,
): Promise<OpResult<Op>> {
  const { reply: greeting } = await sendGreeting(client, sid, meta);
  const call = client.call(op, ...([args] as ArgsOf<Op>));
  // When the greeting is refused the call fails too; report the greeting.
  call.catch(() => {});
  await greeting;
  return call;
}
