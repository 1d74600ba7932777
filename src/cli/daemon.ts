import { readFileSync } from "node:fs";
import { teamStoreLocation } from "../board/team-store.js";
import { Client } from "../client/client.js";
import { startDaemon } from "../client/connect.js";
import { PROTOCOL_VERSION } from "../contract/constants.js";
import { ContractError } from "../contract/errors.js";
import { liveHolder } from "../state/instance-lock.js";
import { OPEN_TOKEN_LIFETIME_MS, readOwnerSecret, signInUrl } from "../state/owner-credential.js";
import { DEFAULT_HTTP, resolveStateDir, stateFiles } from "../state/paths.js";
import { isPostgresUrl } from "../store/pg/url.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg daemon run|start|stop|status|restart [--state-dir d] [--http host:port|off] [--recover] [--store postgres://…]";

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

const HTTP_OPTION = {
  http: { type: "string" },
  "test-hooks": { type: "boolean" },
  "read-only": { type: "boolean" },
  recover: { type: "boolean" },
  store: { type: "string" },
} as const;

const ACTIONS: Record<string, Command> = {
  /** Run one instance in the foreground until SIGTERM / SIGINT /
   * instance_shutdown. Prints one `started` line on stdout once it serves. */
  async run(argv) {
    const { values } = parse(argv, HTTP_OPTION, USAGE);
    const stateDir = resolveStateDir(values["state-dir"]);
    const asked = values.http ?? process.env.CCMSG_HTTP;
    const { startInstance } = await import("../instance/server.js");
    // The board shared in PostgreSQL (DR-0046), opened once for every try
    // below; its code is loaded only when one is configured.
    const location = teamStoreLocation(storeArg(values.store), process.env);
    const teamBoard =
      location === undefined
        ? undefined
        : await (await import("../board/team-board.js")).TeamBoard.open(location);
    const start = (http: string | null) =>
      startInstance({
        stateDir,
        http,
        testHooks: values["test-hooks"] ?? false,
        readOnly: values["read-only"] ?? false,
        recover: values.recover ?? false,
        team: teamBoard,
      });
    let instance: Awaited<ReturnType<typeof startInstance>>;
    try {
      try {
        instance = await start(asked === "off" ? null : (asked ?? DEFAULT_HTTP));
      } catch (error) {
        // A taken port that may not move (listener.ts): a person who did not
        // ask for the default one still gets an instance, on the socket.
        if (asked !== undefined || (error as NodeJS.ErrnoException).code !== "EADDRINUSE")
          throw error;
        process.stderr.write(`ccmsg: ${(error as Error).message}; serving the local socket only\n`);
        instance = await start(null);
      }
    } catch (error) {
      // No instance took the team board: its connections go with the failure.
      await teamBoard?.close().catch(() => {});
      throw error;
    }
    // Every signal, not once: `npm start` in a terminal delivers Ctrl-C twice
    // (the terminal's and npm's forwarded copy), and the second must not kill
    // the instance mid-stop. The stop runs once, whoever asks.
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.on(signal, () => void instance.stop(signal));
    }
    // Console output goes to a file or pipe that may fill or close; losing it
    // must never stop the instance.
    for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
    if (instance.httpTaken !== undefined && instance.http !== null)
      process.stderr.write(
        `ccmsg: ${instance.httpTaken} is in use, so HTTP took a free port for this run: ${new URL(instance.http).host}\n`,
      );
    process.stdout.write(
      `${JSON.stringify({ event: "started", instance: instance.id, pid: instance.pid, socket: instance.socket, http: instance.http, started_at: instance.startedAt })}\n`,
    );
    // A person who started it (a terminal, `npm start`) gets the console's
    // one-time sign-in link; a supervisor's or a background start's log does not.
    if (
      instance.http !== null &&
      (process.stdout.isTTY || process.env.npm_lifecycle_event === "start")
    )
      process.stdout.write(consoleLine(stateDir, instance));
    await instance.stopped;
    process.exit(0);
  },

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

/** `--store`: only a PostgreSQL URL names another store (DR-0046). */
function storeArg(store: string | undefined): string | undefined {
  if (store !== undefined && !isPostgresUrl(store))
    throw new ContractError("invalid_args", "--store must be a postgres://… URL");
  return store;
}

/** The `npm start` line: where the console is, with a link that signs in. */
function consoleLine(
  stateDir: string,
  instance: { id: string; http: string | null; startedAt: number },
): string {
  const secret = readOwnerSecret(stateFiles(stateDir).ownerSecret);
  if (secret === undefined) return `Web console: ${instance.http} (sign in with: ccmsg open)\n`;
  const url = signInUrl(
    secret,
    { instance: instance.id, startedAt: instance.startedAt },
    new URL(instance.http!).host,
    Date.now(),
  );
  return `Web console: ${instance.http}\n  sign in: ${url}\n  (a one-time link, valid for ${OPEN_TOKEN_LIFETIME_MS / 60_000} minutes; later: ccmsg open)\n`;
}
