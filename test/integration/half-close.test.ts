import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { inboxRows } from "../helpers/db.js";
import { startInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";

// Issue 23, item 5: a client that half-closes its socket after its requests
// (`nc -N`, socat, `shutdown(SHUT_WR)`) still reads; every request the
// instance read before the FIN is answered, then the instance ends the
// connection.

interface Read {
  replies: Record<string, unknown>[];
  /** Resolves once the instance has ended its side. */
  ended: Promise<void>;
}

function halfOpen(path: string): Promise<{ socket: Socket; read: Read }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path, allowHalfOpen: true });
    const replies: Record<string, unknown>[] = [];
    let rest = "";
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      const lines = (rest + text).split("\n");
      rest = lines.pop()!;
      for (const l of lines) if (l !== "") replies.push(JSON.parse(l));
    });
    const ended = new Promise<void>((r) => socket.once("end", r));
    socket.once("error", reject);
    socket.once("connect", () => resolve({ socket, read: { replies, ended } }));
  });
}

describe("a client that half-closes", () => {
  it("gets a reply to each of 200 sends written before its FIN, and then the instance closes", async () => {
    const inst = await startInstance();
    const [A, B] = [newSid(), newSid()];
    // B has been here, so what is sent to it is held.
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B);
    b.client.close();
    const { socket, read } = await halfOpen(inst.socket);
    const frames = [
      { op: "hello", request_id: "h", role: "session", protocol_version: 3, sid: A },
      ...Array.from({ length: 200 }, (_, i) => ({
        op: "message_send",
        request_id: `m${i}`,
        to: B,
        text: `held ${i}`,
      })),
    ];
    socket.end(frames.map((f) => `${JSON.stringify(f)}\n`).join(""));
    await read.ended;
    expect(read.replies.map((r) => r.request_id).sort()).toEqual(
      frames.map((f) => f.request_id).sort(),
    );
    expect(read.replies.filter((r) => r.ok !== true)).toEqual([]);
    expect(read.replies.find((r) => r.request_id === "m0")).toMatchObject({ delivered: false });
    expect(inboxRows(inst.stateDir).filter((r) => r.sid === B)).toHaveLength(200);
    socket.destroy();
    await inst.stop();
  });
});
