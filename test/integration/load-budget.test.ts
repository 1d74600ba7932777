import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "../../src/client/client.js";
import { CLI, childEnv, isolatedHome, ROOT, runCli, sharedInstance } from "../helpers/instance.js";
import { loadedBuiltins, loadedChunks, recordingEnv } from "../helpers/loads.js";
import { MCP_INITIALIZE } from "../helpers/mcp.js";

// Issue 26: a capability that is not configured costs nothing at start, and
// the commands every Claude Code turn runs load only what they use. Both are
// read from what the process really loaded (module hooks), in bundle bytes.

/** Sources no instance loads at start unless their capability is configured. */
const NOT_AT_START = [
  /^src\/board\/sync\//, // the board's gh / Linear syncs
  /^src\/store\/pg\//, // the team board in PostgreSQL (url.ts aside)
  /^src\/board\/team-board\.ts$/,
  /^src\/instance\/search\/index-worker\.ts$/, // nothing indexed or asked yet
  /^src\/instance\/search\/query-worker\.ts$/,
  // The ops of capabilities loaded at their first call (instance/common/lazy-ops.ts).
  /^src\/instance\/files\/(handlers|file-ops|find|gitignore)\.ts$/,
  /^src\/instance\/launcher\/(handlers|dir-tree|roots)\.ts$/,
  /^src\/instance\/(sandbox|auth)\/handlers\.ts$/,
  // The LLM side, unless ccmsg's config names a source or a status page.
  /^src\/instance\/llm\/(?!register|webhook)/,
  /^src\/store\/llm-usage\.ts$/,
];
const ALWAYS = /^src\/store\/pg\/url\.ts$/;

/** What each hot command may load of the bundle, in files and bytes: its
 * figure when this test was last tightened, plus a little (a growth past it
 * is a decision, not an accident). Files count first: on Node 20 each module
 * costs ~0.5 ms to resolve, read, compile and link, and a KB ~40 µs to
 * parse, so since stop 37 the commands share a few chunks made for them
 * (`main`, `hot`, `hud`: scripts/build.mjs): a cold `post` read 31 files
 * (98 KB) and then 4 (~118 KB), ~20 ms sooner; `status` and `statusline` 5
 * (~175 KB) where they read ~15 (66 and 85 KB), in the same time. Since the
 * bundle is CommonJS (stop 38) each command reads one file more, the
 * bundler's helpers (3 KB), and ~10 % more bytes (each use of another
 * chunk's export is a property read), and starts ~9 ms sooner: a script
 * that is required skips the ES module loader. */
const BUDGET: Record<string, { files: number; kb: number }> = {
  status: { files: 6, kb: 195 },
  statusline: { files: 6, kb: 195 },
  "inbox --hook": { files: 5, kb: 131 },
  // The client alone: no schema library (issue 26).
  post: { files: 5, kb: 131 },
};

describe("what start loads", () => {
  it("an instance with nothing configured loads no unconfigured capability's code before it answers", async () => {
    const { root, env } = isolatedHome();
    const record = join(root, "loads.txt");
    const stateDir = join(root, "state-dir");
    const child = spawn(
      process.execPath,
      [CLI, "daemon", "run", "--state-dir", stateDir, "--http", "127.0.0.1:0"],
      { env: childEnv({ ...env, ...recordingEnv(record) }), stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once("data", (c: Buffer) => resolve(c.toString().split("\n")[0]!));
        child.once("exit", (code) => reject(new Error(`instance exited ${code}`)));
      });
      const { socket } = JSON.parse(line) as { socket: string };
      const client = await Client.connectUnix(socket);
      await client.call("instance_ping");
      client.close();
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
    const chunks = loadedChunks(record);
    // Nor Node's modules it does not call on the way (util/lazy-builtins.ts):
    // no file it loads to answer imports node:crypto or node:worker_threads.
    const heavyImports = chunks
      .filter((c) =>
        /from "node:(crypto|worker_threads)"/.test(readFileSync(join(ROOT, c.path), "utf8")),
      )
      .map((c) => c.path);
    expect(heavyImports).toEqual([]);
    const offenders = chunks.flatMap((c) =>
      c.sources
        .filter((s) => !ALWAYS.test(s) && NOT_AT_START.some((re) => re.test(s)))
        .map((s) => `${c.path}: ${s}`),
    );
    expect(offenders).toEqual([]);
  });
});

describe("what the MCP server loads", () => {
  const shared = sharedInstance();
  it("`ccmsg mcp` answers initialize without the SDK's ajv validator (ours stands in: scripts/build.mjs) or the schema compiler", async () => {
    const record = join(shared.inst.stateDir, "loads-mcp.txt");
    const r = await runCli(
      ["mcp"],
      { ...shared.env, ...recordingEnv(record) },
      `${JSON.stringify(MCP_INITIALIZE)}\n`,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[0]!)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: "ccmsg" }, capabilities: { tools: {} } },
    });
    const sources = loadedChunks(record).flatMap((c) => c.sources);
    expect(sources.filter((s) => s.includes("@modelcontextprotocol/sdk")).length).toBeGreaterThan(
      0,
    );
    expect(sources.filter((s) => /node_modules\/ajv/.test(s))).toEqual([]);
    // Tool arguments are checked from the first call on (src/mcp/server.ts).
    expect(sources.filter((s) => /typebox\/build\/\w+\/(compiler|errors)\//.test(s))).toEqual([]);
  });
});

describe("what the hot commands load", () => {
  const shared = sharedInstance();
  const commands: Record<string, { args: string[]; stdin?: string }> = {
    status: { args: ["status"] },
    statusline: { args: ["statusline"], stdin: "{}" },
    "inbox --hook": { args: ["inbox", "--hook"], stdin: "{}" },
    post: { args: ["post", "00000000-0000-4000-8000-000000000001", "hi"] },
  };
  for (const [name, { args, stdin }] of Object.entries(commands)) {
    const budget = BUDGET[name]!;
    it(`\`ccmsg ${name}\` loads at most ${budget.files} files, ${budget.kb} KB, of the bundle`, async () => {
      const record = join(shared.inst.stateDir, `loads-${name.replace(/\W+/g, "-")}.txt`);
      await runCli(args, { ...shared.env, ...recordingEnv(record) }, stdin);
      const chunks = loadedChunks(record);
      expect(chunks.map((c) => c.path)).toContain("dist/bin/ccmsg.js");
      const kb = chunks.reduce((sum, c) => sum + c.bytes, 0) / 1024;
      expect(chunks.length).toBeLessThanOrEqual(budget.files);
      expect(Math.round(kb)).toBeLessThanOrEqual(budget.kb);
      // Checking a reply needs no schemas: those compile in the instance.
      const schemas = chunks.flatMap((c) => c.sources).filter((s) => s.includes("/typebox/"));
      expect(schemas).toEqual([]);
      // Nor Node's heavier modules that they never call (util/lazy-builtins.ts):
      // no process is spawned, nothing hashed by node:crypto. (Threads cannot
      // be told apart here: the recording's module hooks run on one.)
      const heavy = ["crypto", "child_process", "http", "assert"];
      expect(loadedBuiltins(record).filter((m) => heavy.includes(m))).toEqual([]);
    });
  }
});
