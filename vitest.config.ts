import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The web console's modules are Preact TSX; unit tests import the pure ones.
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    include: ["test/**/*.test.ts", "web/test/**/*.test.ts"],
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
  },
});
