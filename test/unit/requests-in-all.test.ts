import { describe, expect, it } from "vitest";
import { Connection } from "../../src/instance/wire/connection.js";
import { BACKPRESSURE } from "../../src/instance/wire/outbound.js";
import { memoryTransport } from "../helpers/memory-transport.js";

// Issue 23 item 3: a burst from many peers, each under its own bound, is
// paced by their sockets once too many requests run across the instance.

const inbound = { frame: () => {}, oversized: () => {} };

describe("requests running across every connection", () => {
  it("past the bound, the connection that starts one more stops reading until half were answered", () => {
    const per = BACKPRESSURE.maxRequestsInFlight - 1;
    const count = Math.ceil(BACKPRESSURE.maxRequestsInFlightInAll / per) + 1;
    const transports = Array.from({ length: count }, () => memoryTransport());
    const conns = transports.map((t) => new Connection(t, inbound));
    let started = 0;
    for (const c of conns)
      for (let i = 0; i < per && started < BACKPRESSURE.maxRequestsInFlightInAll; i++, started++)
        c.requestStarted();
    // Each under its own bound, all at the instance's: still reading.
    expect(transports.filter((t) => t.paused)).toEqual([]);
    const last = conns.length - 1;
    conns[last]!.requestStarted();
    expect(transports.map((t) => t.paused).indexOf(true)).toBe(last);
    // Answered down to half: it reads again.
    conns[last]!.requestSettled();
    let settled = 1;
    for (const c of conns.slice(0, last))
      for (
        let i = 0;
        i < per && settled < BACKPRESSURE.maxRequestsInFlightInAll / 2;
        i++, settled++
      )
        c.requestSettled();
    expect(transports[last]!.paused).toBe(true);
    conns[0]!.requestSettled();
    expect(transports[last]!.paused).toBe(false);
  });
});
