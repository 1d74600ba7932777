import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { Connection } from "../connection.js";
import { SocketChannel } from "./channel.js";
import { LineFramer } from "./framer.js";

export interface ConnectionSink {
  accept(conn: Connection): void;
  line(conn: Connection, line: string): void;
  oversized(conn: Connection): void;
}

/**
 * The local socket: access to the socket file (mode 0600, in a 0700 state
 * directory) is the authorization. A leftover socket file from a dead instance
 * is removed first — the caller holds the single-instance lock, so nobody else
 * can be serving it.
 */
export async function listenUnix(path: string, sink: ConnectionSink): Promise<Server> {
  try {
    unlinkSync(path);
  } catch {}
  const server = createServer((socket: Socket) => {
    const conn = new Connection(new SocketChannel(socket));
    const framer = new LineFramer(
      MAX_FRAME_BYTES,
      (line) => sink.line(conn, line),
      () => sink.oversized(conn),
    );
    socket.on("data", (chunk: Buffer) => framer.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => conn.handleClosed());
    sink.accept(conn);
  });
  const umask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
  chmodSync(path, 0o600);
  return server;
}
