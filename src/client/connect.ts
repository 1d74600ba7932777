import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import type { OpName } from "../contract/attributes.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { contractError } from "../contract/errors.js";
import type { SessionMeta } from "../contract/peers.js";
import type { OpResult } from "../contract/schemas.js";
import { liveHolder } from "../state/instance-lock.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import { readJsonFile } from "../util/json-file.js";
import { inWords } from "./arg-words.js";
import { type ArgsOf, Client } from "./client.js";
import { DAEMON_NODE_FLAGS, daemonEnv } from "./daemon-launch.js";
import type { Flags } from "./flags.js";
import { derivedMeta } from "./session-meta.js";

/**
 * Connect to the instance of the state directory; when none answers, start one
 * in the background and proceed (`--no-start`, or `start: false`, refuses
 * instead: a command with nothing to tell a stopped instance).
 */
export async function connectInstance(
  flags: Flags,
  options: { start?: boolean } = {},
): Promise<Client> {
  const stateDir = resolveStateDir(flags["state-dir"]);
  const { socket } = stateFiles(stateDir);
  try {
    return await Client.connectUnix(socket);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ECONNREFUSED") throw error;
  }
  if (flags["no-start"] || options.start === false) {
    throw contractError(
      "instance_unreachable",
      `no instance answers at ${socket}${flags["no-start"] ? " (and --no-start was given)" : ""}`,
    );
  }
  await startDaemon(stateDir);
  return Client.connectUnix(socket);
}

/** `daemon.log.out` is emptied at a background start once it is this big. */
const OUT_MAX_BYTES = 1024 * 1024;

/**
 * Spawn `ccmsg daemon run` detached and wait until it is fully up: its
 * `instance.json` is written, which happens once the socket answers and HTTP
 * is bound (DR-0007). When an instance already holds the state directory's
 * lock (its socket file was lost, or another CLI is starting one), nothing is
 * spawned: we wait for that one instead.
 */
export async function startDaemon(
  stateDir: string,
  http?: string,
  extra: string[] = [],
): Promise<void> {
  const files = stateFiles(stateDir);
  const out = `${files.log}.out`;
  let exited: number | null = null;
  // An instance already holding the lock only has to come up (or back).
  let deadline = Date.now() + 5000;
  if (liveHolder(files.lock) === undefined) {
    deadline = Date.now() + 10_000;
    // Re-run the very entry script this CLI was started from (dist or bundle).
    const args = [process.argv[1]!, "daemon", "run", "--state-dir", stateDir, ...extra];
    if (http !== undefined) args.push("--http", http);
    ensureStateDir(stateDir);
    // Loaded here: every command that finds its instance running goes without.
    const { spawn } = await import("node:child_process");
    const outFd = openSync(out, sizeOf(out) > OUT_MAX_BYTES ? "w" : "a", 0o600);
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, ...args], {
      env: daemonEnv(process.env),
      detached: true,
      stdio: ["ignore", outFd, outFd],
    });
    closeSync(outFd);
    child.on("exit", (code) => {
      exited = code ?? 1;
    });
    child.unref();
  }
  for (let wait = 2; Date.now() < deadline; wait = Math.min(wait * 2, 50)) {
    const holder = liveHolder(files.lock);
    if (holder !== undefined && runningPid(files.instanceJson) === holder) {
      if (await answers(files.socket)) return;
    }
    // Our child failed, and no other instance is coming up.
    if (exited !== null && holder === undefined) break;
    await new Promise((r) => setTimeout(r, wait));
  }
  const holder = liveHolder(files.lock);
  if (holder !== undefined)
    throw contractError(
      "instance_unreachable",
      `an instance (pid ${holder}) holds ${stateDir} but does not answer at ${files.socket}; stop it with \`ccmsg daemon stop\``,
    );
  const tail = readTail(out);
  throw contractError(
    "instance_unreachable",
    `the instance did not start${tail ? `: ${tail}` : ""}`,
  );
}

/** The pid `instance.json` names (written last at startup), if any. */
function runningPid(path: string): number | undefined {
  const pid = (readJsonFile(path) as { pid?: unknown } | undefined)?.pid;
  return typeof pid === "number" ? pid : undefined;
}

async function answers(socket: string): Promise<boolean> {
  try {
    (await Client.connectUnix(socket)).close();
    return true;
  } catch {
    return false;
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
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
 * the instance holds later frames until the greeting settles. A bad argument
 * is named in words (arg-words.ts), as by `callAs`. */
export async function sendGreeting(
  client: Client,
  sid: string | undefined,
  meta?: SessionMeta,
): Promise<{ reply: Promise<OpResult<"hello">> }> {
  const who = sid === undefined ? { role: "user" as const } : { role: "session" as const, sid };
  const announced = sid === undefined ? {} : (meta ?? (await derivedMeta()));
  const reply = client
    .call("hello", {
      ...who,
      ...announced,
      protocol_version: PROTOCOL_VERSION,
      client_version: "ccmsg-cli",
    })
    .catch((error: unknown) => {
      throw inWords("hello", error);
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
 * greeting's refusal wins. A bad argument is named in words (arg-words.ts). */
export async function callAs<Op extends OpName>(
  client: Client,
  sid: string | undefined,
  op: Op,
  args: ArgsOf<Op>[0],
  meta?: SessionMeta,
): Promise<OpResult<Op>> {
  const { reply: greeting } = await sendGreeting(client, sid, meta);
  const call = client.call(op, ...([args] as ArgsOf<Op>)).catch((error: unknown) => {
    throw inWords(op, error);
  });
  // When the greeting is refused the call fails too; report the greeting.
  call.catch(() => {});
  await greeting;
  return call;
}
