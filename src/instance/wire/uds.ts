import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { corkForTurn } from "./coalesce.js";
import { Inbound } from "./inbound.js";
import { udsPeer } from "./peer-endpoint.js";
import type { Accept, FrameReader, FrameWriter, Transport } from "./transport.js";

/**
 * The local socket: access to the socket file (mode 0600, in a 0700 state
 * directory) is the authorization. A leftover socket file from a dead instance
 * is removed first — the caller holds the single-instance lock, so nobody else
 * can be serving it.
 */
export async function listenUnix(path: string, accept: Accept): Promise<Server> {
  try {
    unlinkSync(path);
  } catch {}
  // Half-open: a peer's FIN (`nc -N`, `shutdown(SHUT_WR)`) ends its requests,
  // not its replies; the connection ends once they are answered.
  const server = createServer({ allowHalfOpen: true }, (socket: Socket) =>
    accept(socketTransport(socket)),
  );
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

/** Newline-delimited frames over a stream socket. */
function socketTransport(socket: Socket): Transport {
  const inbound = new Inbound(socket);
  const reader: FrameReader = {
    listen(handlers) {
      inbound.listen(handlers);
      socket.on("data", (chunk: Buffer) => inbound.push(chunk));
      socket.on("end", () => inbound.end());
      socket.on("error", () => {});
      socket.on("close", () => inbound.close());
    },
    pause: () => inbound.pause(),
    resume: () => inbound.resume(),
  };
  const writer: FrameWriter = {
    write(line, done) {
      if (socket.destroyed || !socket.writable) return done?.(false);
      corkForTurn(socket);
      if (done === undefined) socket.write(`${line}\n`);
      else socket.write(`${line}\n`, (error) => done(error == null));
    },
    backlog: () => socket.writableLength,
    onDrain: (listener) => socket.on("drain", listener),
    close() {
      socket.end();
      // A peer that never reads would keep a half-closed socket forever.
      setTimeout(() => socket.destroy(), 1000).unref();
    },
  };
  return { kind: "uds", reader, writer, peer: udsPeer(socket) };
}
