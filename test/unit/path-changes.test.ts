import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { PathChanges } from "../../src/harness/path-changes.js";

// The change counter that lets route (a) skip re-reading `sessions/` for a
// recipient that had no state file: it must move on every change that could
// make one appear, including the directory itself appearing or being replaced.

const root = mkdtempSync(join(tmpdir(), "ccmsg-pc-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Wait until `cond` holds (events arrive asynchronously). */
async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Wait for the watch to settle: armed and no generation change for 100 ms. */
async function settled(c: PathChanges): Promise<number> {
  await until(() => c.armed);
  for (;;) {
    const g = c.generation;
    await new Promise((r) => setTimeout(r, 100));
    if (c.generation === g) return g;
  }
}

describe("PathChanges", () => {
  it("moves on when the directory appears (watched from an ancestor), then on each file written in it", async () => {
    const home = join(root, "a", "home");
    mkdirSync(home, { recursive: true });
    const c = new PathChanges(join(home, "sessions"));
    let g = await settled(c);
    mkdirSync(join(home, "sessions"));
    await until(() => c.generation > g);
    g = await settled(c);
    writeFileSync(join(home, "sessions", "123.json"), "{}");
    await until(() => c.generation > g);
    g = await settled(c);
    writeFileSync(join(home, "sessions", "123.json"), '{"status":"busy"}');
    await until(() => c.generation > g);
    c.close();
  });

  it("follows a directory that is replaced", async () => {
    const home = join(root, "b");
    mkdirSync(join(home, "sessions"), { recursive: true });
    const c = new PathChanges(join(home, "sessions"));
    let g = await settled(c);
    renameSync(join(home, "sessions"), join(home, "old"));
    mkdirSync(join(home, "sessions"));
    await until(() => c.generation > g);
    g = await settled(c);
    // The new directory is the one watched now.
    writeFileSync(join(home, "sessions", "9.json"), "{}");
    await until(() => c.generation > g);
    c.close();
  });
});
