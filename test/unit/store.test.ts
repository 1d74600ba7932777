import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { upsertWorkItem } from "../../src/board/board.js";
import { DatabaseFromFutureError } from "../../src/store/migrate.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import {
  openStateStore,
  openStateStoreReadOnly,
  STATE_STORE_BUSY,
  StoreBusyError,
} from "../../src/store/state-store.js";
import { WorkItemsStore } from "../../src/store/work-items.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-store-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const hash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("the state store", () => {
  it("an in-memory store works and leaves no files", () => {
    const dir = tempDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const store = openStateStore(":memory:");
      upsertWorkItem(store, { id: "m", title: "in memory" });
      expect(new WorkItemsStore(store.db).get("m")?.title).toBe("in memory");
      store.close();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("applies every migration once, with ECC's own ledger, and refuses a file from the future", () => {
    const path = join(tempDir(), "s.db");
    openStateStore(path).close();
    const db = new Database(path);
    expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
    expect(
      db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all(),
    ).toEqual([
      { version: 1, name: "001_initial_state_store" },
      { version: 2, name: "002_work_items" },
    ]);
    db.pragma("user_version = 999");
    db.close();
    expect(() => openStateStore(path)).toThrow(DatabaseFromFutureError);
  });

  it("opening, reading and closing an up-to-date store never changes the database", () => {
    const path = join(tempDir(), "s.db");
    const store = openStateStore(path);
    upsertWorkItem(store, { id: "a", title: "a" });
    store.close();
    const before = hash(path);
    openStateStore(path).close();
    const reader = openStateStoreReadOnly(path)!;
    expect(new WorkItemsStore(reader.db).recent(10)).toHaveLength(1);
    reader.close();
    expect(hash(path)).toBe(before);
    expect(openStateStoreReadOnly(join(tempDir(), "none.db"))).toBeUndefined();
  });

  it("a write that cannot get the lock in time is STATE_STORE_BUSY, names the database, and changes nothing", () => {
    const path = join(tempDir(), "s.db");
    const store = openStateStore(path, { busyTimeoutMs: 50 });
    upsertWorkItem(store, { id: "a", title: "before" });
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    let caught: unknown;
    try {
      upsertWorkItem(store, { id: "a", title: "after" });
    } catch (error) {
      caught = error;
    }
    holder.exec("COMMIT");
    holder.close();
    expect(caught).toBeInstanceOf(StoreBusyError);
    expect((caught as StoreBusyError).code).toBe(STATE_STORE_BUSY);
    expect((caught as Error).message).toContain(path);
    expect(new WorkItemsStore(store.db).get("a")?.title).toBe("before");
    store.close();
  });
});
