import { createHash } from "node:crypto";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { upsertWorkItem } from "../../src/board/board.js";
import { ContractError, STATE_STORE_BUSY } from "../../src/contract/errors.js";
import { openDatabase } from "../../src/store/database.js";
import { migrate } from "../../src/store/migrate.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import { MIGRATIONS } from "../../src/store/migrations/index.js";
import { busy, isStoreBusy, openStateStoreReadOnly } from "../../src/store/state-store.js";
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
    expect(() => openStateStore(path)).toThrow(ContractError);
    expect(() => openStateStore(path)).toThrow(/schema version 999 is newer than this build/);
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
    expect(caught).toBeInstanceOf(ContractError);
    expect(isStoreBusy(caught)).toBe(true);
    expect((caught as ContractError).code).toBe(STATE_STORE_BUSY);
    expect((caught as ContractError).status).toBe(503);
    expect(((caught as ContractError).cause as { code?: string }).code).toBe("SQLITE_BUSY");
    expect((caught as Error).message).toContain(path);
    expect(new WorkItemsStore(store.db).get("a")?.title).toBe("before");
    store.close();
  });
});

/** Every way a process opens the file: the CLI and the mutation workers
 * (`openStateStore`), readers (`openStateStoreReadOnly`), and the instance
 * (`openDatabase`, then `migrate` under the busy mapping). */
const OPENERS: [string, (path: string) => void][] = [
  ["openStateStore", (path) => openStateStore(path).close()],
  ["openStateStoreReadOnly", (path) => openStateStoreReadOnly(path)?.close()],
  [
    "openDatabase + migrate",
    (path) => {
      const db = openDatabase(path);
      try {
        busy(path, () => migrate(db, MIGRATIONS));
      } finally {
        db.close();
      }
    },
  ],
];

/** Each opener fails with a ContractError naming the file and SQLite's error
 * as the cause, and leaves the file byte for byte as it was. */
function expectRefusedUntouched(path: string, sqliteCode: string): void {
  const dir = join(path, "..");
  const before = hash(path);
  const files = readdirSync(dir).sort();
  for (const [name, open] of OPENERS) {
    let caught: unknown;
    try {
      open(path);
    } catch (error) {
      caught = error;
    }
    expect(caught, name).toBeInstanceOf(ContractError);
    const error = caught as ContractError;
    expect(error.code, name).toBe("internal_error");
    expect(error.message, name).toContain(path);
    expect(error.message, name).toContain("is not a usable database");
    expect((error.cause as { code?: string }).code, name).toBe(sqliteCode);
    expect(hash(path), `${name} changed the file`).toBe(before);
    // A read-only connection may leave SQLite's WAL sidecars (as it does on a
    // healthy file); an empty WAL carries nothing that could reach the file.
    const now = readdirSync(dir).sort();
    expect(
      now.filter((f) => !files.includes(f) && !/-(wal|shm)$/.test(f)),
      `${name} left files behind`,
    ).toEqual([]);
    for (const f of now.filter((f) => f.endsWith("-wal")))
      expect(statSync(join(dir, f)).size, `${name} wrote to ${f}`).toBe(0);
  }
}

describe("a damaged database file", () => {
  it("a file of garbage bytes is refused as not a usable database, and left unchanged", () => {
    const path = join(tempDir(), "ccmsg.db");
    const garbage = Buffer.alloc(16 * 1024);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 251;
    writeFileSync(path, garbage);
    expectRefusedUntouched(path, "SQLITE_NOTADB");
    expect(readFileSync(path).equals(garbage)).toBe(true);
  });

  it("a real ccmsg.db truncated to half its size is refused as not a usable database, and left unchanged", () => {
    const path = join(tempDir(), "ccmsg.db");
    const store = openStateStore(path);
    for (let i = 0; i < 200; i++)
      upsertWorkItem(store, { id: `wi-${i}`, title: `item ${i} ${"x".repeat(200)}` });
    store.close();
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(16 * 4096);
    truncateSync(path, Math.floor(size / 2));
    expectRefusedUntouched(path, "SQLITE_CORRUPT");
    expect(statSync(path).size).toBe(Math.floor(size / 2));
  });
});
