import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STATE_STORE_BUSY } from "../../src/contract/errors.js";
import { CommitQueue, type CommitQueueOptions } from "../../src/store/commit-queue.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import type { StateStore } from "../../src/store/state-store.js";

const dirs: string[] = [];
const stores: StateStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(options: CommitQueueOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-queue-"));
  dirs.push(dir);
  const path = join(dir, "ccmsg.db");
  const store = openStateStore(path);
  stores.push(store);
  store.db.pragma("busy_timeout = 0");
  const queue = new CommitQueue(store.db, path, options);
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
  /** Another connection takes the write lock and holds it until released. */
  const lockedByAnother = () => {
    const other = openStateStore(path);
    stores.push(other);
    other.db.exec("BEGIN IMMEDIATE");
    return { release: () => other.db.exec("COMMIT") };
  };
  return { store, queue, put, keys, committed, lockedByAnother };
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

describe("another connection holds the write lock", () => {
  it("each write waits its own deadline: an old one is refused busy, a younger one keeps waiting and commits", async () => {
    let now = 0;
    const { queue, put, committed, lockedByAnother } = open({ deadlineMs: 5000, now: () => now });
    const lock = lockedByAnother();
    const old = queue.run(() => put.run("old", "1"));
    const oldSettled = old.catch((e: unknown) => e);
    expect(queue.flush()).toBe(false);
    now = 4540;
    const young = queue.run(() => put.run("young", "1"));
    expect(queue.flush()).toBe(false);
    // The old write's 5 s are over; the young one has waited 0.51 s.
    now = 5050;
    expect(queue.flush()).toBe(false);
    expect(await oldSettled).toMatchObject({ code: STATE_STORE_BUSY });
    expect(queue.size()).toBe(1);
    lock.release();
    await young;
    expect(committed()).toEqual(["young"]);
  });
});
