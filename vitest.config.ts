import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Files that share one module graph per worker (`isolate: false`): with a
// fresh graph per file, importing the sources and the helpers again cost more
// than many files' tests (the 74 in-process files: 82 CPU-s isolated, 29
// shared). Helpers clean up after each file through test/setup/after-file.ts.
const SHARED_GRAPH = [
  "test/unit/**/*.test.ts",
  "test/contract/**/*.test.ts",
  "web/test/**/*.test.ts",
  "test/integration/**/*.test.ts",
  "test/e2e/**/*.test.ts",
  "test/hud/**/*.test.ts",
];
// With a graph of its own: requests-in-all reads the instance's count of
// requests running on every connection, kept for the whole process, which
// other files' connections leave above zero.
const OWN_GRAPH = ["test/unit/requests-in-all.test.ts"];

export default defineConfig({
  // The web console's modules are Preact TSX; unit tests import the pure ones.
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    // Integration tests start real instances on real sockets; give them room but
    // never rely on the timeout to pass: waits are on events.
    // End-to-end tests (test/e2e/) drive Debian's Chromium against a real
    // instance, one browser per file.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files spend their time waiting — on instances starting, on timers,
    // on child processes and Chromium — not computing. Vitest's default of one
    // worker fewer than the cores runs them one at a time on a 2-core machine
    // (the suite took ~11 min that way, the CPU half idle); one per core
    // keeps both busy through those waits. One more than the cores was ~2×
    // faster still, but its timing-sensitive tests tipped over under load.
    maxWorkers: availableParallelism(),
    setupFiles: ["test/setup/after-file.ts"],
    projects: [
      {
        extends: true,
        test: { name: "shared-graph", include: SHARED_GRAPH, exclude: OWN_GRAPH, isolate: false },
      },
      { extends: true, test: { name: "own-graph", include: OWN_GRAPH } },
    ],
  },
});
