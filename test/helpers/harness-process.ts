// Processes standing in for Claude Code, found through the state files it
// writes (harness.md §5.1): what the session-control tests signal.
import { type ChildProcess, spawn } from "node:child_process";
import { processStatus } from "../../src/probes/process.js";
import { afterEachFile } from "./after-file.js";
import { procStartOf, writeSessionFile } from "./state-file.js";

const children = new Set<ChildProcess>();
afterEachFile(() => {
  for (const c of children) c.kill("SIGKILL");
});

/** Stands in for Claude Code: prints each SIGINT/SIGTERM it gets, exits on
 * the ones it does not ignore, and answers "ping" on its IPC channel. */
const FAKE_HARNESS = `
const ignore = (process.argv[1] || "").split(",");
for (const s of ["SIGINT", "SIGTERM"])
  process.on(s, () => { process.stdout.write(s + "\\n"); if (!ignore.includes(s)) process.exit(0); });
process.on("message", () => process.send("pong"));
setInterval(() => {}, 1e9);
`;

export interface FakeHarness {
  pid: number;
  procStart: string;
  /** Signal names it received so far. */
  signals(): string[];
  /** Resolves with its exit signal or code. */
  exited: Promise<string>;
  /** A round trip on its IPC channel: whatever was sent before has arrived. */
  ping(): Promise<void>;
  alive(): Promise<boolean>;
}

export async function fakeHarness(
  configDir: string,
  sid: string,
  options: { ignore?: string[]; fields?: Record<string, unknown>; env?: NodeJS.ProcessEnv } = {},
): Promise<FakeHarness> {
  const child = spawn(process.execPath, ["-e", FAKE_HARNESS, (options.ignore ?? []).join(",")], {
    stdio: ["ignore", "pipe", "ignore", "ipc"],
    env: { PATH: process.env.PATH, ...options.env },
  });
  children.add(child);
  await new Promise((r) => child.once("spawn", r));
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<string>((r) =>
    child.once("exit", (code, signal) => {
      children.delete(child);
      r(signal ?? `exit ${code}`);
    }),
  );
  // Its handlers are installed once it answers.
  const ping = () =>
    new Promise<void>((r) => {
      child.once("message", () => r());
      child.send("ping");
    });
  await ping();
  const pid = child.pid!;
  const procStart = await procStartOf(pid);
  writeSessionFile(configDir, {
    pid,
    sessionId: sid,
    procStart,
    cwd: configDir,
    ...options.fields,
  });
  return {
    pid,
    procStart,
    signals: () => out.split("\n").filter((l) => l !== ""),
    exited,
    ping,
    alive: async () => (await processStatus(pid)).alive,
  };
}
