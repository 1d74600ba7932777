import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eccLockPath, withEccLock } from "../../src/store/ecc-lock.js";

// ECC's state-store lock (ecc-surfaces §3.4) as ccmsg speaks it.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "ecc-lock-"));
  dirs.push(dir);
  return join(dir, "state.db");
}

describe("ECC's state-store lock", () => {
  it("holds a sibling lock naming this process for the operation, and removes it after", () => {
    const db = dbPath();
    const seen = withEccLock(db, () => JSON.parse(readFileSync(eccLockPath(db), "utf8")));
    expect(seen).toMatchObject({ pid: process.pid, hostname: expect.any(String) });
    expect(existsSync(eccLockPath(db))).toBe(false);
  });

  it("waits out a lock held elsewhere, then STATE_STORE_BUSY, leaving it as it was", () => {
    const db = dbPath();
    writeFileSync(eccLockPath(db), "{}\n");
    let ran = false;
    expect(() =>
      withEccLock(
        db,
        () => {
          ran = true;
        },
        60,
      ),
    ).toThrow(expect.objectContaining({ code: "STATE_STORE_BUSY" }));
    expect(ran).toBe(false);
    expect(readFileSync(eccLockPath(db), "utf8")).toBe("{}\n");
  });

  it("refuses to remove a lock replaced while held (STATE_STORE_LOCK_LOST), and an operation's error wins over it", () => {
    const db = dbPath();
    const replace = () => {
      unlinkSync(eccLockPath(db));
      writeFileSync(eccLockPath(db), "someone else's\n");
    };
    expect(() => withEccLock(db, replace)).toThrow(
      expect.objectContaining({ code: "STATE_STORE_LOCK_LOST" }),
    );
    expect(readFileSync(eccLockPath(db), "utf8")).toBe("someone else's\n");
    unlinkSync(eccLockPath(db));
    const failed = new Error("the operation failed");
    expect(() =>
      withEccLock(db, () => {
        replace();
        throw failed;
      }),
    ).toThrow(failed);
    expect(Reflect.get(failed, "releaseError")).toMatchObject({ code: "STATE_STORE_LOCK_LOST" });
  });
});
