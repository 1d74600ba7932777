import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openAtomicFile, writeFileAtomic } from "../../src/state/atomic-write.js";

/** An empty directory, removed when the test finishes. */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-atomic-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

describe("writeFileAtomic", () => {
  it("replaces the file whole, leaves no temp file and sets the mode", () => {
    const dir = tempDir();
    const path = join(dir, "doc.json");
    writeFileAtomic(path, "first\n");
    writeFileAtomic(path, "second\n");
    expect(readFileSync(path, "utf8")).toBe("second\n");
    expect(readdirSync(dir)).toEqual(["doc.json"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("takes another mode", () => {
    const path = join(tempDir(), "open.txt");
    writeFileAtomic(path, "x", 0o644);
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });
});

describe("openAtomicFile", () => {
  it("appears whole at commit, with the bytes written, and never half-written before", async () => {
    const dir = tempDir();
    const path = join(dir, "dump.json");
    const file = await openAtomicFile(path);
    const piece = "é".repeat(600_000);
    await file.write(piece);
    await file.write(piece);
    expect(readdirSync(dir)).toEqual([`dump.json.${process.pid}.tmp`]);
    expect(await file.commit()).toBe(Buffer.byteLength(piece) * 2);
    expect(readFileSync(path, "utf8")).toBe(piece + piece);
    expect(readdirSync(dir)).toEqual(["dump.json"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("leaves nothing behind when aborted", async () => {
    const dir = tempDir();
    const file = await openAtomicFile(join(dir, "x.json"));
    await file.write("partial");
    await file.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});
