import pino from "pino";
import { describe, expect, it } from "vitest";
import { Connection } from "../../src/instance/connection.js";
import { Dispatcher } from "../../src/instance/dispatch.js";
import type { Channel } from "../../src/instance/transport/channel.js";

/** A channel that records what the connection writes. */
function recordingChannel(): Channel & { lines: string[] } {
  const lines: string[] = [];
  return {
    kind: "uds",
    lines,
    write: (line) => lines.push(line),
    backlog: () => 0,
    onDrain: () => {},
    pauseReading: () => {},
    resumeReading: () => {},
    close: () => {},
  };
}

describe("the dispatcher", () => {
  it("turns a handler's unexpected failure into internal_error with a log line, and keeps serving", async () => {
    const logged: unknown[] = [];
    const log = pino({ level: "error" }, { write: (s: string) => logged.push(JSON.parse(s)) });
    const dispatcher = new Dispatcher(
      "0".repeat(32),
      {
        instance_ping: () => {
          throw new Error("boom");
        },
        hello: () => ({}),
      },
      new Set(),
      log,
      () => {},
    );
    const channel = recordingChannel();
    const conn = new Connection(channel);
    dispatcher.handleLine(conn, JSON.stringify({ op: "instance_ping", request_id: "1" }));
    await dispatcher.idle(1000);
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(channel.lines[0]!)).toEqual({
      ok: false,
      request_id: "1",
      error: { code: "internal_error", msg: "instance_ping failed inside the instance" },
    });
    expect(logged).toEqual([
      expect.objectContaining({ msg: "handler failed", op: "instance_ping", request_id: "1" }),
    ]);
    dispatcher.handleLine(conn, JSON.stringify({ op: "instance_ping", request_id: "2" }));
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(channel.lines[1]!).request_id).toBe("2");
  });
});
