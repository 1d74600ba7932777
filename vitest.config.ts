import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests start real instances on real sockets; give them room but
    // never rely on the timeout to pass: waits are on events.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
