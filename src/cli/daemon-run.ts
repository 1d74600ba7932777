// `ccmsg daemon run`: one instance in the foreground. The build bundles this
// module and the instance's whole start graph apart from the command
// (dist/daemon/, DR-0064): a restart loads a few files, not the ~80 chunks
// the command's code split would make of it, and the command's other
// chunks carry none of the instance.
import { teamStoreLocation } from "../board/team-store.js";
import { SERVING_V8_FLAGS } from "../client/daemon-launch.js";
import { startInstance } from "../instance/server.js";
import { OPEN_TOKEN_LIFETIME_MS, readOwnerSecret, signInUrl } from "../state/owner-credential.js";
import { DEFAULT_HTTP, resolveStateDir, stateFiles } from "../state/paths.js";
import { HTTP_OPTION, storeArg, USAGE } from "./daemon-options.js";
import { parse } from "./options.js";

/** Run one instance until SIGTERM / SIGINT / instance_shutdown. Prints one
 * `started` line on stdout once it serves. */
export async function runDaemon(argv: string[]): Promise<void> {
  const { values } = parse(argv, HTTP_OPTION, USAGE);
  const stateDir = resolveStateDir(values["state-dir"]);
  const asked = values.http ?? process.env.CCMSG_HTTP;
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
  // Signals are heard from the start: the socket answers before the start
  // is done (HTTP and instance.json follow it), and a stop asked in that
  // window runs once the instance exists. Every signal, not once: `npm start`
  // in a terminal delivers Ctrl-C twice (the terminal's and npm's forwarded
  // copy), and the second must not kill the instance mid-stop. The stop runs
  // once, whoever asks.
  let instance: Awaited<ReturnType<typeof startInstance>> | undefined;
  let stopAsked: NodeJS.Signals | undefined;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (instance === undefined) stopAsked ??= signal;
      else void instance.stop(signal);
    });
  }
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
  if (stopAsked !== undefined) void instance.stop(stopAsked);
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
  void import("node:v8").then((v8) => v8.setFlagsFromString(SERVING_V8_FLAGS));
  // A person who started it (a terminal, `npm start`) gets the console's
  // one-time sign-in link; a supervisor's or a background start's log does not.
  if (
    instance.http !== null &&
    (process.stdout.isTTY || process.env.npm_lifecycle_event === "start")
  )
    process.stdout.write(consoleLine(stateDir, instance));
  await instance.stopped;
  process.exit(0);
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
