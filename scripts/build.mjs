// Build: compile src/ to dist/ (the `ccmsg/contract` package subpath and its
// declarations; not type-checked here: `npm run typecheck` does that, and
// `npm test` runs it beside the build, which need not check it twice), copy
// the data files tsc does not emit, then bundle the `ccmsg` command with esbuild into dist/bin/ and the instance
// with rolldown into dist/daemon/, and build the web console (web/, Vite)
// into dist/web/, which the instance serves.
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

// What the esbuild bundles share (the command, the worker threads).
const common = {
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "[name]-[hash]",
  // Native or heavy runtime dependencies stay in node_modules.
  external: ["better-sqlite3", "fastify", "@fastify/static", "pg", "ws"],
  sourcemap: true,
  // Which sources each chunk holds: the tests that keep start and the hot
  // commands small read it (test/integration/load-budget.test.ts).
  metafile: true,
  logLevel: "warning",
};

// The instance is a bundle of its own (DR-0064), so that its start is a
// few files: esbuild's code split cuts whatever two lazily loaded modules
// share into a chunk of its own (an instance's start read ~80 of them), so
// the instance is bundled by rolldown, which puts everything the entry
// imports statically into one chunk (the `$initial` group) and leaves what
// loads on demand in chunks of its own. The command reaches it by
// `import("./daemon-run.js")`, left for the runtime to resolve here.
const daemonRun = {
  name: "daemon-run-apart",
  setup(b) {
    b.onResolve({ filter: /^\.\/daemon-run\.js$/ }, () => ({
      path: "../daemon/daemon-run.js",
      external: true,
    }));
  },
};

const cli = await build({
  ...common,
  // A worker thread is an entry of its own: worker_threads loads it by URL,
  // resolved beside the code that starts it (chunks sit next to the entries).
  entryPoints: {
    ccmsg: join(root, "src", "cli", "main.ts"),
    "gateway-worker": join(root, "src", "gateway", "request-worker.ts"),
  },
  outdir: join(root, "dist", "bin"),
  plugins: [daemonRun],
});

const daemonDir = join(root, "dist", "daemon");
const instance = await rolldown({
  input: { "daemon-run": join(root, "src", "cli", "daemon-run.ts") },
  platform: "node",
  external: [/^node:/, ...common.external],
  // Sources import each other as `./x.js`: the `.ts` beside it.
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  transform: { target: "node20" },
  logLevel: "warn",
});
const { output } = await instance.write({
  dir: daemonDir,
  format: "esm",
  chunkFileNames: "[name]-[hash].js",
  sourcemap: true,
  codeSplitting: { groups: [{ name: "start", tags: ["$initial"] }] },
  // As esbuild's output: no comments, and non-ASCII characters escaped, so
  // that V8 keeps the ~800 KB start chunk a one-byte string (a single "…"
  // in a comment made all of it two-byte, slower to decode and to parse).
  comments: false,
  charset: "ascii",
});
await instance.close();
// The instance's worker threads, beside the code that starts them; apart
// from the rolldown bundle, whose start group would otherwise take in their
// code too.
const workers = await build({
  ...common,
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
const instanceOutputs = Object.fromEntries(
  output
    .filter((o) => o.type === "chunk")
    .map((c) => [
      `dist/daemon/${c.fileName}`,
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
  JSON.stringify({ ...cli.metafile.outputs, ...workers.metafile.outputs, ...instanceOutputs }),
);
chmodSync(join(root, "dist", "bin", "ccmsg.js"), 0o755);

// The web console: its own config (web/vite.config.ts), after everything
// else so a failure names the console and leaves the command built.
const { build: viteBuild } = await import("vite");
await viteBuild({ configFile: join(root, "web", "vite.config.ts"), logLevel: "warn" });
