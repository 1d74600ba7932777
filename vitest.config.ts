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
  },
});
