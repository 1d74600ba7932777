// Build: compile src/ to dist/ (the `ccmsg/contract` package subpath and its
// declarations; not type-checked here: `npm run typecheck` does that, and
// `npm test` runs it beside the build, which need not check it twice), copy
// the data files tsc does not emit, then bundle the `ccmsg` command into
// dist/bin/ and the instance into dist/daemon/ with rolldown (its worker
// threads with esbuild), and build the web console (web/, Vite) into
// dist/web/, which the instance serves.
//
// Why a bundle: the command starts cold for every hook and agent call, and an
// instance must answer soon after a restart. Resolving the hundreds of small
// modules of the schema library alone took ~100 ms; one code-split bundle
// loads in a fraction of that, while each command still loads only its chunks.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { rolldown } from "rolldown";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--noCheck"], {
  stdio: "inherit",
});
cpSync(join(root, "src", "contract", "fixtures"), join(root, "dist", "contract", "fixtures"), {
  recursive: true,
  filter: (src) => !src.endsWith(".ts"),
});

// Native or heavy runtime dependencies stay in node_modules.
const EXTERNAL = ["better-sqlite3", "fastify", "@fastify/static", "pg", "ws"];

// The command and the instance are bundled by rolldown, each apart
// (DR-0064): esbuild's code split cuts whatever two lazily loaded modules
// share into a chunk of its own, so an instance's start read ~80 files and a
// cold `ccmsg post` 31, and on Node 20 each file costs ~0.5 ms to resolve,
// read, compile and link. What both share: sources import each other as
// `./x.js` (the `.ts` beside it), no comments, and non-ASCII characters
// escaped, so that V8 keeps a chunk a one-byte string (a single "…" in a
// comment made all of the ~800 KB start chunk two-byte, slower to decode and
// to parse).
const rolldownInput = {
  platform: "node",
  external: [/^node:/, ...EXTERNAL],
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  transform: { target: "node20" },
  logLevel: "warn",
};
const rolldownOutput = {
  format: "esm",
  chunkFileNames: "[name]-[hash].js",
  sourcemap: true,
  comments: false,
  charset: "ascii",
};

// The command reaches the instance by `import("./daemon-run.js")`, left for
// the runtime to resolve beside dist/bin/.
const daemonRun = {
  name: "daemon-run-apart",
  resolveId(id) {
    if (id === "./daemon-run.js") return { id: "../daemon/daemon-run.js", external: true };
  },
};

// The MCP SDK's Server imports its ajv-based JSON Schema validator when it
// loads (ajv and its formats, ~230 KB of the `ccmsg mcp` start) for the one
// thing ccmsg's server never does, elicitation: ours stands in its place
// (src/mcp/json-schema-validator.ts, DR-0068). Should the SDK move the file,
// ajv is simply loaded again (the load-budget test says so).
const mcpWithoutAjv = {
  name: "mcp-without-ajv",
  resolveId(id, importer) {
    if (id === "../validation/ajv-provider.js" && importer?.includes("@modelcontextprotocol/sdk"))
      return join(root, "src", "mcp", "json-schema-validator.ts");
  },
};

// The command: what its entry imports statically is one chunk (`main`,
// which every command loads, `daemon run` included), what the groups the
// hooks run add to it another (`hot`), and what the statusline and `status`
// add a third (`hud`): a hook's command reads four files, and neither the
// instance's start nor a hook compiles what it does not run. Every other
// command group loads on demand in chunks of its own. The groups are computed
// from the module graph (a plugin records it while the bundle is built), so
// they follow the sources. Only our own sources: a dependency one of them
// pulls in stays where the code split puts it, which the load-budget test sees.
const cliGroup = (...names) => names.map((name) => join(root, "src", "cli", `${name}.ts`));
const MAIN = join(root, "src", "cli", "main.ts");
const GROUPS = {
  main: [MAIN],
  hot: cliGroup("messages", "inbox", "reserve"),
  hud: cliGroup("status", "statusline"),
};
const graph = new Map();
const cli = await rolldown({
  ...rolldownInput,
  // A worker thread is an entry of its own: worker_threads loads it by URL,
  // resolved beside the code that starts it (chunks sit next to the entries).
  input: {
    ccmsg: MAIN,
    "gateway-worker": join(root, "src", "gateway", "request-worker.ts"),
  },
  plugins: [
    daemonRun,
    mcpWithoutAjv,
    {
      name: "module-graph",
      moduleParsed(info) {
        graph.set(info.id, info.importedIds);
      },
    },
  ],
  onLog(level, log, handler) {
    // main.ts imports the session's meta on demand to start it early; the
    // hook commands import it statically, so it stays in their chunk: meant.
    const meant =
      log.code === "INEFFECTIVE_DYNAMIC_IMPORT" &&
      log.message.includes("src/client/session-meta.ts");
    if (!meant) handler(level, log);
  },
});
// The sources `seeds` import statically, all the way down.
const closure = (seeds) => {
  const out = new Set();
  for (const stack = [...seeds]; stack.length > 0; ) {
    const id = stack.pop();
    if (out.has(id) || !graph.has(id)) continue;
    out.add(id);
    stack.push(...graph.get(id));
  }
  return out;
};
// Read when the chunks are made, once rolldown has scanned every module: each
// group takes what the ones before it did not.
let taken;
const inGroup = (name) => (id) => {
  if (taken === undefined) {
    taken = {};
    const before = new Set();
    for (const [group, seeds] of Object.entries(GROUPS)) {
      taken[group] = new Set([...closure(seeds)].filter((m) => !before.has(m)));
      for (const m of taken[group]) before.add(m);
    }
  }
  return id.startsWith(join(root, "src") + "/") && id !== MAIN && taken[name].has(id);
};
// CommonJS: Node 20 loads a script's `require` graph without its ES module
// loader (its own modules, the resolve and link steps for each file, the
// asynchronous module jobs), which took ~9 ms off every cold command and off
// the instance's start (measured interleaved: cold `post` 103.0 → 93.7 ms,
// restart 198 → 189 ms). The instance stays an ES module (dist/daemon/),
// imported on demand; the dependencies a command imports on demand (ws, pg)
// are imported, not required.
const { output: cliOutput } = await cli.write({
  ...rolldownOutput,
  format: "cjs",
  dir: join(root, "dist", "bin"),
  codeSplitting: {
    groups: [
      // The bundler's own helpers ride in `main`, not in a file of their own.
      { name: "main", test: /rolldown\/runtime/ },
      ...Object.keys(GROUPS).map((name) => ({ name, test: inGroup(name) })),
    ],
  },
});
if (taken === undefined || taken.hot.size === 0) throw new Error("no hot chunk was made");
await cli.close();
// The package is `"type": "module"`; these files are scripts.
writeFileSync(join(root, "dist", "bin", "package.json"), '{ "type": "commonjs" }\n');

const daemonDir = join(root, "dist", "daemon");
const instance = await rolldown({
  ...rolldownInput,
  input: { "daemon-run": join(root, "src", "cli", "daemon-run.ts") },
});
const { output } = await instance.write({
  ...rolldownOutput,
  dir: daemonDir,
  // Everything the entry imports statically in one chunk (`$initial`); what
  // loads on demand in chunks of its own.
  codeSplitting: { groups: [{ name: "start", tags: ["$initial"] }] },
});
await instance.close();
// The instance's worker threads, beside the code that starts them; apart
// from the rolldown bundle, whose start group would otherwise take in their
// code too.
const workers = await build({
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  sourcemap: true,
  // Which sources each chunk holds (test/integration/load-budget.test.ts).
  metafile: true,
  logLevel: "warning",
  entryPoints: {
    "board-worker": join(root, "src", "board", "board-worker.ts"),
    "search-worker": join(root, "src", "instance", "session-control", "search-worker.ts"),
    "index-worker": join(root, "src", "instance", "search", "index-worker.ts"),
    "query-worker": join(root, "src", "instance", "search", "query-worker.ts"),
  },
  outdir: daemonDir,
  chunkNames: "worker-chunk-[hash]",
});
// The same shape as esbuild's metafile outputs: each file's bytes and the
// sources in it, by path relative to the checkout.
const outputsOf = (dir, chunks) =>
  Object.fromEntries(
    chunks
      .filter((o) => o.type === "chunk")
      .map((c) => [
        `${dir}/${c.fileName}`,
        {
          bytes: Buffer.byteLength(c.code),
          inputs: Object.fromEntries(
            Object.entries(c.modules).map(([id, m]) => [
              relative(root, id).replaceAll("\\", "/"),
              { bytesInOutput: m.renderedLength },
            ]),
          ),
        },
      ]),
  );
writeFileSync(
  join(root, "dist", "bundle-meta.json"),
  JSON.stringify({
    ...outputsOf("dist/bin", cliOutput),
    ...workers.metafile.outputs,
    ...outputsOf("dist/daemon", output),
  }),
);
chmodSync(join(root, "dist", "bin", "ccmsg.js"), 0o755);

// The web console: its own config (web/vite.config.ts), after everything
// else so a failure names the console and leaves the command built.
const { build: viteBuild } = await import("vite");
await viteBuild({ configFile: join(root, "web", "vite.config.ts"), logLevel: "warn" });
