import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { DAEMON_NODE_FLAGS, daemonEnv } from "../src/client/daemon-launch.js";

// One way for every benchmark group to run a real instance: `ccmsg daemon run`
// in a state dir of its own, ready once it prints its `started` line.

export const CLI = join(import.meta.dirname, "..", "dist", "bin", "ccmsg.js");

export interface Daemon {
  child: ChildProcess;
  socket: string;
  pid: number;
  /** The HTTP base URL, when `http` was not "off". */
  http?: string;
}

/** Start an instance; `env` is its whole environment besides PATH. */
export async function startDaemon(
  stateDir: string,
  env: Record<string, string>,
  http = "off",
  args: string[] = [],
): Promise<Daemon> {
  const child = spawn(
    process.execPath,
    [...DAEMON_NODE_FLAGS, CLI, "daemon", "run", "--state-dir", stateDir, "--http", http, ...args],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: daemonEnv({ PATH: process.env.PATH, ...env }),
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (c: Buffer) => resolve(c.toString().split("\n")[0]!));
    child.once("exit", (code) => reject(new Error(`instance exited ${code}`)));
  });
  const started = JSON.parse(line) as { socket: string; pid: number; http?: string | null };
  return { child, socket: started.socket, pid: started.pid, http: started.http ?? undefined };
}
