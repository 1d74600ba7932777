import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  boundRecord,
  LOG_RECORD_LIMITS,
  openLog,
  REPEATS_PER_SECOND,
} from "../../src/instance/log.js";
import { LogFile } from "../../src/instance/log-file.js";

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "ccmsg-log-"));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const notice = (n: number) => `${JSON.stringify({ dropped: n })}\n`;
const line = (i: number, width = 0) => `${JSON.stringify({ i, pad: "x".repeat(width) })}\n`;
const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Poll a file-system condition (the writer works in the background). */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met within 5 s");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a log record", () => {
  it("keeps 2 KiB of a long string and says how much was cut", () => {
    const out = boundRecord({ reason: "r".repeat(100_000), sid: "s" });
    const reason = out.reason as string;
    expect(reason.startsWith("r".repeat(LOG_RECORD_LIMITS.string))).toBe(true);
    expect(reason).toContain(`…(+${100_000 - LOG_RECORD_LIMITS.string} chars)`);
    expect(out.sid).toBe("s");
  });

  it("is bounded as a whole: many long strings, wide and deep objects", () => {
    const wide = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`k${i}`, "v".repeat(5000)]),
    );
    let deep: Record<string, unknown> = { leaf: "x" };
    for (let i = 0; i < 50; i++) deep = { deep };
    const text = JSON.stringify(boundRecord({ wide, deep, list: new Array(10_000).fill("y") }));
    expect(text.length).toBeLessThan(LOG_RECORD_LIMITS.record + 4096);
  });

  it("turns an error into plain fields, its code kept", () => {
    const err = Object.assign(new Error("disk full"), { code: "ENOSPC" });
    const out = boundRecord({ err }).err as Record<string, unknown>;
    expect(out).toMatchObject({ type: "Error", message: "disk full", code: "ENOSPC" });
    expect(out.stack).toContain("disk full");
  });
});

describe("the log file", () => {
  it("rotates by size and keeps only the stated number of old files", async () => {
    const dir = tempDir();
    const path = join(dir, "daemon.log");
    const file = new LogFile(path, notice, {
      maxBytes: 1000,
      keep: 2,
      maxQueuedBytes: 1 << 20,
      retryMs: 20,
    });
    for (let i = 0; i < 200; i++) {
      file.write(line(i, 80));
      // Let some writes land in between, as a running instance would.
      if (i % 10 === 9) await new Promise((r) => setImmediate(r));
    }
    await file.close();
    expect(readdirSync(dir).sort()).toEqual(["daemon.log", "daemon.log.1", "daemon.log.2"]);
    for (const name of readdirSync(dir))
      expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(1000);
    const last = lines(path);
    expect(last.at(-1)).toMatchObject({ i: 199 });
  });

  it("on a write error (ENOSPC) drops lines, never throws, and counts them once writing works again", async () => {
    const dir = tempDir();
    const path = join(dir, "daemon.log");
    symlinkSync("/dev/full", path);
    const file = new LogFile(path, notice, {
      maxBytes: 1 << 20,
      keep: 1,
      maxQueuedBytes: 200,
      retryMs: 20,
    });
    // More than the queue holds while every write fails: the rest is dropped.
    for (let i = 0; i < 50; i++) expect(file.write(line(i))).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    rmSync(path);
    // Once the retry has written to the new file it has taken the queue, so
    // the next line has room (on a busy machine no retry may have run yet,
    // and a line written now could find the queue still full).
    await until(() => existsSync(path) && statSync(path).size > 0);
    file.write(line(1000));
    await until(() => existsSync(path) && readFileSync(path, "utf8").includes('"i":1000'));
    await file.close();
    const got = lines(path);
    const dropped = got.find((l) => "dropped" in l)?.dropped as number;
    const kept = got.filter((l) => "i" in l).map((l) => l.i as number);
    expect(dropped).toBeGreaterThan(0);
    // Every line is either in the file or counted, none twice.
    expect(dropped + kept.length).toBe(51);
    expect(kept.at(-1)).toBe(1000);
    // The notice comes before the lines written after the gap.
    expect("dropped" in got[0]!).toBe(true);
  });

  it("closes without waiting on a file that cannot be written", async () => {
    const dir = tempDir();
    const path = join(dir, "daemon.log");
    symlinkSync("/dev/full", path);
    const file = new LogFile(path, notice);
    for (let i = 0; i < 10; i++) file.write(line(i));
    await file.close(200);
    expect(file.write(line(11))).toBe(true);
  });
});

describe("the instance log's repeats", () => {
  it("keeps at most REPEATS_PER_SECOND lines of one message per second and sums up the rest", async () => {
    const path = join(tempDir(), "daemon.log");
    const { log, close } = openLog(path);
    // A synchronous burst: well inside one second.
    for (let i = 0; i < 300; i++) log.info({ i }, "session declared stopping");
    log.warn("something else");
    await close();
    const got = lines(path);
    expect(got.filter((l) => l.msg === "session declared stopping")).toHaveLength(
      REPEATS_PER_SECOND,
    );
    expect(got.some((l) => l.msg === "something else")).toBe(true);
    const summary = got.find((l) => l.msg === "repeated log lines suppressed");
    expect(summary?.suppressed).toEqual({ "session declared stopping": 300 - REPEATS_PER_SECOND });
  });
});

describe("the instance log's lines", () => {
  it("are JSON lines in order: level, time, pid, the record's fields (bounded, errors made plain), then msg", async () => {
    const path = join(tempDir(), "daemon.log");
    const { log, close } = openLog(path);
    const before = Date.now();
    log.info({ sid: "s1", reason: "r".repeat(5000) }, "session declared stopping");
    log.warn("no fields");
    log.error({ err: Object.assign(new Error("disk gone"), { code: "EIO" }) }, "write failed");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    log.info({ cyclic, n: 10n }, "odd values");
    // A getter that throws costs the record's fields, never the line.
    log.warn(
      Object.defineProperty({}, "bad", {
        enumerable: true,
        get() {
          throw new Error("no");
        },
      }),
      "a field that cannot be read",
    );
    await close();
    const raw = readFileSync(path, "utf8").split("\n").filter(Boolean);
    expect(raw[0]).toMatch(/^\{"level":30,"time":\d+,"pid":\d+,"sid":"s1","reason":"r+…/);
    expect(raw[0]!.endsWith(`"msg":"session declared stopping"}`)).toBe(true);
    const got = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(got.map((l) => [l.level, l.msg])).toEqual([
      [30, "session declared stopping"],
      [40, "no fields"],
      [50, "write failed"],
      [30, "odd values"],
      [40, "a field that cannot be read"],
    ]);
    expect(got[0]!.pid).toBe(process.pid);
    expect(got[0]!.time as number).toBeGreaterThanOrEqual(before);
    expect((got[0]!.reason as string).length).toBeLessThan(LOG_RECORD_LIMITS.string + 40);
    expect(got[2]!.err).toMatchObject({ type: "Error", message: "disk gone", code: "EIO" });
    expect(got[3]!.n).toBe("10");
    expect(JSON.stringify(got[3]!.cyclic)).toContain("[…]");
    expect(got[4]!.unwritable).toContain("no");
  });
});
