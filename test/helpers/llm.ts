import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, childEnv, isolatedHome, startInstance, type TestInstance } from "./instance.js";

/** An instance whose ccmsg config holds this `llm` section (or none). */
export async function llmInstance(llm: Record<string, unknown> | undefined): Promise<TestInstance> {
  const home = isolatedHome();
  if (llm !== undefined) {
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(join(home.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"), JSON.stringify({ llm }));
  }
  return startInstance({ env: home.env });
}

export interface GatewayProcess {
  /** `http://host:port` */
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM; resolves with the exit code once it flushed and ended. */
  stop(): Promise<number | null>;
}

/** `ccmsg gateway --json --listen 127.0.0.1:0` for an instance, forwarding to
 * `upstream`; resolves once it listens. */
export async function startGatewayCli(
  inst: TestInstance,
  upstream: string,
): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    [CLI, "gateway", "--json", "--listen", "127.0.0.1:0", "--upstream", upstream],
    {
      env: childEnv({ ...inst.env, CCMSG_STATE_DIR: inst.stateDir }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const first = await new Promise<{ listen: string }>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as { listen: string });
    });
    void exited.then((code) => reject(new Error(`gateway exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://${first.listen}`,
    child,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
