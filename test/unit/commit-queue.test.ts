import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CommitQueue } from "../../src/store/commit-queue.js";
import { openStateStore, type StateStore } from "../../src/store/state-store.js";

const dirs: string[] = [];
const stores: StateStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-queue-"));
  dirs.push(dir);
  const path = join(dir, "ccmsg.db");
  const store = openStateStore(path);
  stores.push(store);
  store.db.pragma("busy_timeout = 0");
  const queue = new CommitQueue(store.db, path);
  const put = store.db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
  const keys = () =>
    (store.db.prepare("SELECT key FROM meta ORDER BY key").all() as { key: string }[]).map(
      (r) => r.key,
    );
  // A second connection sees only what was committed.
  const committed = () => {
    const other = openStateStore(path);
    try {
      return (other.db.prepare("SELECT key FROM meta ORDER BY key").all() as { key: string }[]).map(
        (r) => r.key,
      );
    } finally {
      other.close();
    }
  };
  return { store, queue, put, keys, committed };
}

describe("the group commit", () => {
  it("commits the writes of one turn together and answers each caller with its result once committed", async () => {
    const { queue, put, committed } = open();
    const results = await Promise.all(
      ["a", "b", "c"].map((k) =>
        queue.run(() => {
          put.run(k, "1");
          return k.toUpperCase();
        }),
      ),
    );
    expect(results).toEqual(["A", "B", "C"]);
    expect(committed()).toEqual(["a", "b", "c"]);
  });

  it("undoes a failing write of a batch alone: only its caller hears it", async () => {
    const { queue, put, committed } = open();
    const outcomes = await Promise.allSettled([
      queue.run(() => put.run("a", "1")),
      queue.run(() => {
        put.run("half", "1");
        throw new Error("this write fails after writing");
      }),
      queue.run(() => put.run("c", "1")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(committed()).toEqual(["a", "c"]);
  });

  it("undoes a failing write that is alone in its batch, and the next write commits", async () => {
    const { queue, put, committed, store } = open();
    await expect(
      queue.run(() => {
        put.run("half", "1");
        throw new Error("this write fails after writing");
      }),
    ).rejects.toThrow("fails after writing");
    expect(store.db.inTransaction).toBe(false);
    expect(committed()).toEqual([]);
    await queue.run(() => put.run("next", "1"));
    expect(committed()).toEqual(["next"]);
  });

  it("a write that itself opens a transaction nests inside the batch", async () => {
    const { queue, put, committed, store } = open();
    await Promise.all([
      queue.run(() => store.db.transaction(() => put.run("nested", "1"))()),
      queue.run(() => put.run("plain", "1")),
    ]);
    await queue.run(() => store.db.transaction(() => put.run("alone", "1"))());
    expect(committed()).toEqual(["alone", "nested", "plain"]);
  });
});
