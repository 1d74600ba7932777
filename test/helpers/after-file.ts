// Cleanups a helper owes each test file: what its tests started and left.
// A helper module is evaluated once per worker when files share a module
// graph (vitest.config.ts), so an `afterAll` at its top level would run after
// the first file only; the helpers register here instead, and
// test/setup/after-file.ts runs every cleanup after every file. The list is
// kept on the global object: vitest evaluates a setup file (and what it
// imports) again for each file, while the helpers stay evaluated.

const KEY = Symbol.for("ccmsg.test.afterEachFile");
const registry = globalThis as { [KEY]?: (() => unknown)[] };
registry[KEY] ??= [];
const cleanups = registry[KEY];

/** Run `fn` after each test file's own `afterAll`s; the last registered runs
 * first, as top-level `afterAll`s of the helpers did. */
export function afterEachFile(fn: () => unknown): void {
  cleanups.push(fn);
}

export async function runFileCleanups(): Promise<void> {
  for (const fn of [...cleanups].reverse()) await fn();
}
