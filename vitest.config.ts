import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// In-process tests: no instance, no child process (test/hud/ runs the CLI
// and git, so it is not here). They share one module graph per worker
// (`isolate: false`): with a fresh graph per file, importing and transforming
// the sources again took more time than their tests (75 files: 76 s and
// 82 CPU-s on 2 cores, against 27 s and 29 CPU-s shared).
const IN_PROCESS = [
  "test/unit/**/*.test.ts",
  "test/contract/**/*.test.ts",
  "web/test/**/*.test.ts",
];
// In-process, yet reading state kept for the whole process: the instance's
// count of requests running on every connection, which the other files'
// connections leave above zero. Each gets a graph of its own.
const PROCESS_STATE = ["test/unit/requests-in-all.test.ts"];

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
    projects: [
      {
        extends: true,
        test: { name: "in-process", include: IN_PROCESS, exclude: PROCESS_STATE, isolate: false },
      },
      {
        extends: true,
        test: {
          name: "isolated",
          include: [
            "test/integration/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/hud/**/*.test.ts",
            ...PROCESS_STATE,
          ],
        },
      },
    ],
  },
});
