import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { trimWalWhenIdle } from "../../src/store/wal-trim.js";

// A database's WAL keeps its high-water mark unless it is cut back: once the
// writes stop, the instance's files shrink to what they hold (issue 26).

const tmp = mkdtempSync(join(tmpdir(), "ccmsg-wal-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

const walBytes = (path: string) => statSync(`${path}-wal`).size;

function written(name: string) {
  const path = join(tmp, name);
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (v TEXT)");
  return { path, db, write: () => db.prepare("INSERT INTO t VALUES (?)").run("x".repeat(4000)) };
}

describe("the WAL once writes stop", () => {
  it("is cut to nothing one idle period after the last write, its rows kept", () => {
    vi.useFakeTimers();
    const { path, db, write } = written("idle.db");
    trimWalWhenIdle(db, 100);
    for (let i = 0; i < 200; i++) write();
    expect(walBytes(path)).toBeGreaterThan(500_000);
    vi.advanceTimersByTime(100); // writes seen since the last look: not idle yet
    expect(walBytes(path)).toBeGreaterThan(500_000);
    vi.advanceTimersByTime(100);
    expect(walBytes(path)).toBe(0);
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(200);
    db.close();
  });

  it("is left while another connection reads from it, and cut once it stopped", () => {
    vi.useFakeTimers();
    const { path, db, write } = written("reader.db");
    trimWalWhenIdle(db, 100);
    for (let i = 0; i < 50; i++) write();
    const reader = openDatabase(path, { readonly: true });
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM t").get();
    vi.advanceTimersByTime(200);
    expect(walBytes(path)).toBeGreaterThan(0);
    reader.exec("COMMIT");
    vi.advanceTimersByTime(100);
    expect(walBytes(path)).toBe(0);
    reader.close();
    db.close();
  });
});
