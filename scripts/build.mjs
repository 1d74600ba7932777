// Build: type-check and compile src/ to dist/ (the `ccmsg/contract` package
// subpath and its declarations), copy the data files tsc does not emit, then
// bundle the `ccmsg` command with esbuild into dist/bin/, and build the web
// console (web/, Vite) into dist/web/, which the instance serves.
//
// Why a bundle: the command starts cold for every hook and agent call, and an
// instance must answer soon after a restart. Resolving the hundreds of small
// modules of the schema library alone took ~100 ms; one code-split bundle
// loads in a fraction of that, while each command still loads only its chunks.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  stdio: "inherit",
});
cpSync(join(root, "src", "contract", "fixtures"), join(root, "dist", "contract", "fixtures"), {
  recursive: true,
  filter: (src) => !src.endsWith(".ts"),
});

const bundled = await build({
  // Each worker thread is an entry of its own: worker_threads loads it by URL,
  // resolved beside the code that starts it (chunks sit next to the entries).
  entryPoints: {
    ccmsg: join(root, "src", "cli", "main.ts"),
    "board-worker": join(root, "src", "board", "board-worker.ts"),
    "search-worker": join(root, "src", "instance", "session-control", "search-worker.ts"),
    "index-worker": join(root, "src", "instance", "search", "index-worker.ts"),
    "query-worker": join(root, "src", "instance", "search", "query-worker.ts"),
    "gateway-worker": join(root, "src", "gateway", "request-worker.ts"),
  },
  outdir: join(root, "dist", "bin"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "[name]-[hash]",
  // Native or heavy runtime dependencies stay in node_modules.
  external: ["better-sqlite3", "fastify", "@fastify/static", "pg", "pino", "ws"],
  sourcemap: true,
  // Which sources each chunk holds: the tests that keep start and the hot
  // commands small read it (test/unit/load-budget.test.ts).
  metafile: true,
  logLevel: "warning",
});
writeFileSync(join(root, "dist", "bundle-meta.json"), JSON.stringify(bundled.metafile.outputs));
chmodSync(join(root, "dist", "bin", "ccmsg.js"), 0o755);

// The web console: its own config (web/vite.config.ts), after everything
// else so a failure names the console and leaves the command built.
const { build: viteBuild } = await import("vite");
await viteBuild({ configFile: join(root, "web", "vite.config.ts"), logLevel: "warn" });
