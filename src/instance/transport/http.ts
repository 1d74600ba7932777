import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { WebSocketServer } from "ws";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { Connection } from "../connection.js";
import { WebSocketChannel } from "./channel.js";
import { LineFramer } from "./framer.js";
import type { ConnectionSink } from "./uds.js";

/** A WebSocket message may carry several frames; allow a full frame plus its
 * neighbours, and let the framer answer an oversized line with bad_request
 * instead of the socket being torn down. */
const WS_MAX_MESSAGE_BYTES = 4 * MAX_FRAME_BYTES;

export interface HttpOptions {
  host: string;
  port: number;
  sink: ConnectionSink;
  /** Extra routes (the control-pane API, test hooks). */
  routes?: (app: FastifyInstance) => void;
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
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new Connection(new WebSocketChannel(ws, socket));
      const framer = new LineFramer(
        MAX_FRAME_BYTES,
        (line) => options.sink.line(conn, line),
        () => options.sink.oversized(conn),
      );
      ws.on("message", (data: Buffer, isBinary) => {
        framer.push(isBinary ? data : Buffer.from(data));
        // Each message ends its last frame, with or without a trailing newline.
        framer.push(NEWLINE);
      });
      ws.on("error", () => {});
      ws.on("close", () => conn.handleClosed());
      options.sink.accept(conn);
    });
  });

  app.get("/*", async (req, reply) => {
    if (req.url.split("?")[0]!.endsWith("/ws"))
      return reply.code(426).send({ ok: false, error: "upgrade required" });
    return reply.code(404).send({ ok: false, error: "not found" });
  });
  options.routes?.(app);

  await app.listen({ host: options.host, port: options.port });
  const bound = app.server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const address = `${host}:${port}`;
  origin = `http://${address}`;
  return { app, address };
}

const NEWLINE = Buffer.from("\n");

/** Whether a browser origin is this instance's own (loopback names of one
 * port are the same origin to a person). */
function sameHostOrigin(from: string, own: string): boolean {
  if (from === own) return true;
  try {
    const a = new URL(from);
    const b = new URL(own);
    const loopback = (h: string) => h === "localhost" || h === "127.0.0.1" || h === "[::1]";
    return (
      a.protocol === b.protocol && a.port === b.port && loopback(a.hostname) && loopback(b.hostname)
    );
  } catch {
    return false;
  }
}
