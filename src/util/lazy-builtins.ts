import { createRequire } from "node:module";

// Node built-ins loaded on their first use. An ESM `import` of a built-in
// loads it, and every lazy part of it, when the importing module loads:
// node:crypto with webcrypto is ~5 ms and node:worker_threads ~3 ms of a
// start, on the instance's way to its socket and a hot command's way to its
// greeting, where neither is called. Modules on those ways take them here.

const load = createRequire(import.meta.url);
let crypto: typeof import("node:crypto") | undefined;
let workers: typeof import("node:worker_threads") | undefined;

export function nodeCrypto(): typeof import("node:crypto") {
  crypto ??= load("node:crypto") as typeof import("node:crypto");
  return crypto;
}

export function workerThreads(): typeof import("node:worker_threads") {
  workers ??= load("node:worker_threads") as typeof import("node:worker_threads");
  return workers;
}
