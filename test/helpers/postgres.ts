import { execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.js";

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster on loopback, for one test file. */
export interface TestPostgres {
  /** A URL for a new, empty database on the cluster. */
  database(name?: string): Promise<string>;
  /** Stop the server and remove the cluster. */
  stop(): Promise<void>;
}

/** Debian's server binaries (`postgresql` package): the newest version. */
function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql",
    );
  return join(root, versions[0]!, "bin");
}

let counter = 0;

/**
 * initdb + pg_ctl start a cluster in a temp dir (trust auth, loopback only,
 * its socket in the same dir). PostgreSQL refuses to run as root, so under
 * root the server runs as Debian's `postgres` user. Fails loudly — never
 * skips — when PostgreSQL is missing.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const as = (cmd: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", cmd, ...args]) : run(cmd, args);
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout), Number(gid));
  }
  await as(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
  const port = await freePort();
  // Tests need no durability (fsync off); a benchmark asks for the defaults.
  const opts = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=200${options.durable ? "" : " -c fsync=off"}`;
  await as(join(bin, "pg_ctl"), [
    "-D",
    data,
    "-o",
    opts,
    "-w",
    "-t",
    "30",
    "-l",
    join(dir, "log"),
    "start",
  ]);
  const base = `postgres://postgres@127.0.0.1:${port}`;
  return {
    async database(name) {
      const db = name ?? `t${process.pid}_${++counter}`;
      await psql(bin, port, `CREATE DATABASE ${db}`);
      return `${base}/${db}`;
    },
    async stop() {
      await as(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function psql(bin: string, port: number, sql: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      join(bin, "psql"),
      ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`psql: ${err}`))));
  });
}
