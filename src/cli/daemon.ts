import { readFileSync } from "node:fs";
import { Client } from "../client/client.js";
import { startDaemon } from "../client/connect.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { ContractError } from "../contract/errors.js";
import { liveHolder } from "../state/instance-lock.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { HTTP_OPTION, storeArg, USAGE } from "./daemon-options.js";
import { parse, print } from "./options.js";

export const daemon: Command = async (argv) => {
  const [verb, ...rest] = argv;
  if (verb === "passkey") {
    const { passkey, contractSpelling } = await import("./passkey.js");
    return passkey(contractSpelling(rest));
  }
  const action = verb === undefined ? undefined : ACTIONS[verb];
  if (action === undefined) throw new ContractError("invalid_args", `usage: ${USAGE}`);
  await action(rest);
};

const ACTIONS: Record<string, Command> = {
  /** Run one instance in the foreground: the instance's own bundle
   * (daemon-run.ts; DR-0064). */
  run: async (argv) => (await import("./daemon-run.js")).runDaemon(argv),

  /** Start an instance in the background (no-op when one runs). */
  async start(argv) {
    const { values } = parse(argv, HTTP_OPTION, USAGE);
    const stateDir = resolveStateDir(values["state-dir"]);
    const already = await status(stateDir);
    if (already === undefined) await startDaemon(stateDir, values.http, recoverArg(values));
    const now = await status(stateDir);
    if (now === undefined)
      throw new ContractError("instance_unreachable", "the instance did not start");
    print(
      values,
      { started: already === undefined, ...now },
      () =>
        `${already === undefined ? "started" : "already running"}: instance ${now.instance} pid ${now.pid}${now.http ? ` ${now.http}` : ""}`,
    );
  },

  /** Stop the instance gracefully and wait for its process to exit. */
  async stop(argv) {
    const { values } = parse(argv, {}, USAGE);
    const stopped = await stopInstance(resolveStateDir(values["state-dir"]));
    print(values, { stopped }, () => (stopped ? "stopped" : "not running"));
  },

  async status(argv) {
    const { values } = parse(argv, {}, USAGE);
    const stateDir = resolveStateDir(values["state-dir"]);
    const s = await status(stateDir);
    if (s === undefined) {
      // Not answering, yet alive and holding the state directory.
      const pid = liveHolder(stateFiles(stateDir).lock);
      const socket = stateFiles(stateDir).socket;
      return print(
        values,
        pid === undefined ? { running: false } : { running: true, answering: false, pid, socket },
        () =>
          pid === undefined
            ? "not running"
            : `running: pid ${pid}, but it does not answer at ${socket} (\`ccmsg daemon stop\` stops it)`,
      );
    }
    print(
      values,
      { running: true, answering: true, ...s },
      () =>
        `running: instance ${s.instance} pid ${s.pid}, socket ${s.socket}${s.http ? `, ${s.http}` : ""}, ${s.clients} client(s)`,
    );
  },

  async restart(argv) {
    const { values } = parse(argv, HTTP_OPTION, USAGE);
    const stateDir = resolveStateDir(values["state-dir"]);
    await stopInstance(stateDir);
    await startDaemon(stateDir, values.http, recoverArg(values));
    const now = await status(stateDir);
    if (now === undefined)
      throw new ContractError("instance_unreachable", "the instance did not start");
    print(
      values,
      { restarted: true, ...now },
      () => `restarted: instance ${now.instance} pid ${now.pid}`,
    );
  },
};

interface Status {
  instance: string;
  pid: number;
  socket: string;
  http: string | null;
  started_at: number;
  clients: number;
}

/** How long to wait for a live instance whose socket does not answer: it may
 * be starting, or listening again after its socket file was removed. */
const SETTLE_MS = 2000;

/** The running instance of a state directory, answering on its socket; or
 * undefined. */
async function status(stateDir: string): Promise<Status | undefined> {
  const files = stateFiles(stateDir);
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const s = await ping(files);
    if (s !== undefined || Date.now() > deadline) return s;
    if (liveHolder(files.lock) === undefined) return undefined;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function ping(files: ReturnType<typeof stateFiles>): Promise<Status | undefined> {
  let client: Client;
  try {
    client = await Client.connectUnix(files.socket);
  } catch {
    return undefined;
  }
  try {
    const ping = await client.call("instance_ping");
    let http: string | null = null;
    try {
      http = (JSON.parse(readFileSync(files.instanceJson, "utf8")) as { http: string | null }).http;
    } catch {}
    return {
      instance: ping.instance,
      pid: ping.pid,
      socket: files.socket,
      http,
      started_at: ping.started_at,
      clients: ping.clients,
    };
  } finally {
    client.close();
  }
}

/** Stop the instance: by `instance_shutdown` on its socket, or, when it
 * lives but does not answer there, by SIGTERM to the lock's holder (the same
 * graceful stop). Waits for the process to exit. */
async function stopInstance(stateDir: string): Promise<boolean> {
  const s = await status(stateDir);
  let pid = s?.pid;
  if (s !== undefined) {
    const client = await Client.connectUnix(stateFiles(stateDir).socket);
    await client.call("hello", { role: "user", protocol_version: PROTOCOL_VERSION });
    await client.call("instance_shutdown");
    client.close();
  } else {
    pid = liveHolder(stateFiles(stateDir).lock);
    if (pid === undefined) return false;
    process.kill(pid, "SIGTERM");
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid as number, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new ContractError("internal_error", `instance pid ${pid} did not exit within 10 s`);
}

/** `--recover` and `--store` for the background instance. */
function recoverArg(values: { recover?: boolean; store?: string }): string[] {
  const store = storeArg(values.store);
  return [...(values.recover ? ["--recover"] : []), ...(store ? ["--store", store] : [])];
}
