import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { type WebSocket, WebSocketServer } from "ws";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { isLoopbackHost } from "../../loopback.js";
import { LineFramer } from "./framer.js";
import type { Accept, FrameReader, FrameWriter, Transport } from "./transport.js";

/** A WebSocket message may carry several frames; allow a full frame plus its
 * neighbours, and let the framer answer an oversized line with bad_request
 * instead of the socket being torn down. */
const WS_MAX_MESSAGE_BYTES = 4 * MAX_FRAME_BYTES;

export interface HttpOptions {
  host: string;
  port: number;
  accept: Accept;
  /** Registers the instance's plugins (control-pane API, test hooks), each
   * encapsulated in its own Fastify context. */
  plugins?: (app: FastifyInstance) => void;
}

/**
 * The HTTP listener: WebSocket at any path ending in `/ws` (so a reverse proxy
 * may add a prefix), a 426 for a plain request there, 404 elsewhere.
 *
 * Until person authentication lands, a browser may connect only from this
 * instance's own origin: without that check any web page the person visits
 * could reach the loopback port and speak as them.
 */
export async function listenHttp(
  options: HttpOptions,
): Promise<{ app: FastifyInstance; address: string }> {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_MESSAGE_BYTES });
  let origin = "";

  app.server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (!path.endsWith("/ws")) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    const from = req.headers.origin;
    if (from !== undefined && !sameHostOrigin(from, origin)) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => options.accept(webSocketTransport(ws, socket)));
  });

  app.get("/*", async (req, reply) => {
    if (req.url.split("?")[0]!.endsWith("/ws"))
      return reply.code(426).send({ ok: false, error: "upgrade required" });
    return reply.code(404).send({ ok: false, error: "not found" });
  });
  options.plugins?.(app);

  await app.listen({ host: options.host, port: options.port });
  const bound = app.server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const address = `${host}:${port}`;
  origin = `http://${address}`;
  return { app, address };
}

const NEWLINE = Buffer.from("\n");

/** Newline-delimited frames inside WebSocket messages; a message ends its last
 * frame with or without a trailing newline. */
function webSocketTransport(ws: WebSocket, raw: Socket): Transport {
  const reader: FrameReader = {
    listen(handlers) {
      const framer = new LineFramer(MAX_FRAME_BYTES, handlers.frame, handlers.oversized);
      ws.on("message", (data: Buffer, isBinary) => {
        framer.push(isBinary ? data : Buffer.from(data));
        framer.push(NEWLINE);
      });
      ws.on("error", () => {});
      ws.on("close", handlers.closed);
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
  };
  const writer: FrameWriter = {
    write(line) {
      if (ws.readyState === ws.OPEN) ws.send(`${line}\n`);
    },
    backlog: () => ws.bufferedAmount,
    // `ws` has no drain event of its own; its socket's is the same signal.
    onDrain: (listener) => raw.on("drain", listener),
    close() {
      ws.close(1001, "instance stopping");
      setTimeout(() => ws.terminate(), 1000).unref();
    },
  };
  return { kind: "ws", reader, writer };
}

/** Whether a browser origin is this instance's own (loopback names of one
 * port are the same origin to a person). */
function sameHostOrigin(from: string, own: string): boolean {
  if (from === own) return true;
  try {
    const a = new URL(from);
    const b = new URL(own);
    return (
      a.protocol === b.protocol &&
      a.port === b.port &&
      isLoopbackHost(a.hostname) &&
      isLoopbackHost(b.hostname)
    );
  } catch {
    return false;
  }
}
