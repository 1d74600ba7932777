import type { Logger } from "pino";
import { describe, expect, it } from "vitest";
import { deferredLog } from "../../src/instance/deferred-log.js";

/** A stand-in for the real log: records what it was given and whether it closed. */
function fakeLog() {
  const lines: unknown[][] = [];
  let closed = false;
  const log = {
    info: (...a: unknown[]) => lines.push(["info", ...a]),
    warn: (...a: unknown[]) => lines.push(["warn", ...a]),
    error: (...a: unknown[]) => lines.push(["error", ...a]),
  } as unknown as Logger;
  return {
    lines,
    closed: () => closed,
    opened: {
      log,
      close: async () => {
        closed = true;
      },
    },
  };
}

describe("the instance log opened after the socket answers", () => {
  it("keeps what is logged before it opens, in order, and writes it once open", async () => {
    const real = fakeLog();
    let opens = 0;
    const deferred = deferredLog(async () => {
      opens++;
      return real.opened;
    });
    deferred.log.info({ a: 1 }, "first");
    deferred.log.warn("second");
    expect(real.lines).toEqual([]);
    await deferred.load();
    deferred.log.error({ b: 2 }, "third");
    await deferred.load();
    expect(opens).toBe(1);
    expect(real.lines).toEqual([
      ["info", { a: 1 }, "first"],
      ["warn", "second"],
      ["error", { b: 2 }, "third"],
    ]);
  });

  it("a start that fails before the log opened still writes its line on close", async () => {
    const real = fakeLog();
    const deferred = deferredLog(async () => real.opened);
    deferred.log.error({ err: "boom" }, "startup failed");
    await deferred.close();
    expect(real.lines).toEqual([["error", { err: "boom" }, "startup failed"]]);
    expect(real.closed()).toBe(true);
  });

  it("a log that cannot be opened never stops the instance: nothing throws", async () => {
    const deferred = deferredLog(async () => {
      throw new Error("EACCES");
    });
    deferred.log.info("kept nowhere");
    await expect(deferred.load()).resolves.toBeUndefined();
    deferred.log.info("dropped");
    await expect(deferred.close()).resolves.toBeUndefined();
  });
});
