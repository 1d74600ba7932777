import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { writeFileAtomic } from "../../src/state/atomic-write.js";
import { InstanceLock } from "../../src/state/instance-lock.js";

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-lock-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

describe("temp files on a failed write", () => {
  it("taking the lock on a full disk fails and leaves no instance.lock.<pid>.tmp", () => {
    const dir = tempDir();
    const lock = join(dir, "instance.lock");
    // Writes through this name fail with ENOSPC, as on a full disk.
    symlinkSync("/dev/full", `${lock}.${process.pid}.tmp`);
    expect(() => InstanceLock.acquire(lock)).toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(lock)).toBe(false);
  });

  it("an atomic write that fails removes its temp file", () => {
    const dir = tempDir();
    const path = join(dir, "instance.json");
    symlinkSync("/dev/full", `${path}.${process.pid}.tmp`);
    expect(() => writeFileAtomic(path, "{}\n")).toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
    // A rename that fails (a directory in the way) removes it too.
    mkdirSync(path);
    writeFileAtomic(join(dir, "other"), "x");
    mkdirSync(join(path, "inside"));
    expect(() => writeFileAtomic(path, "{}\n")).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["instance.json", "other"]);
  });
});
