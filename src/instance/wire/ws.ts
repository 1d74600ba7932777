import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { corkForTurn } from "./coalesce.js";
import { Inbound } from "./inbound.js";
import { tcpPeer } from "./peer-endpoint.js";
import type { FrameReader, FrameWriter, Transport } from "./transport.js";
import { interceptWebSocketData } from "./ws-frames.js";

/**
 * Frames over a WebSocket (docs/11-the-wire-and-the-contract.md, "WebSocket messages"; DR-0013), either
 * side of it: a message carries whole frames — one, or several separated by
 * newlines — and its end ends its last frame, so a frame never spans two
 * messages. Who may open one is decided before it is accepted (http/gate.ts
 * on the listener, the mesh's handshake on a dialed link); this file only
 * moves frames.
 */

/** The `ws` library's own message limit. Data messages never reach its
 * receiver (see ws-frames.ts), so this bounds only what it reads by itself
 * while a connection closes. */
const WS_MAX_MESSAGE_BYTES = MAX_FRAME_BYTES;

const NEWLINE = Buffer.from("\n");

/** A WebSocket the listener accepted. */
export interface AcceptedSocket {
  readonly transport: Transport;
  /** Called once, when the socket has closed. */
  onClose(listener: () => void): void;
}

/**
 * The listener's half of the WebSocket handshake, for an upgrade already
 * admitted: it echoes the one subprotocol it is told (contract §1.1), and no
 * other, and hands on the transport before any byte is read.
 */
export class WebSocketAcceptor {
  private readonly chosen = new WeakMap<IncomingMessage, string>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: WS_MAX_MESSAGE_BYTES,
    // Messages are read as a stream (ws-frames.ts), which takes no extension.
    perMessageDeflate: false,
    handleProtocols: (_offered, req) => this.chosen.get(req) ?? false,
  });

  accept(
    req: IncomingMessage,
    socket: Socket,
    head: Buffer,
    protocol: string | undefined,
    accepted: (ws: AcceptedSocket) => void,
  ): void {
    if (protocol !== undefined) this.chosen.set(req, protocol);
    this.wss.handleUpgrade(req, socket, head, (ws) =>
      accepted({
        transport: acceptedTransport(ws, socket),
        onClose: (listener) => ws.once("close", listener),
      }),
    );
  }
}

/**
 * The accepting side: messages are read as a stream through the same line
 * framer as the local socket, so a frame over MAX_FRAME_BYTES is answered
 * `bad_request` and skipped without being held, whatever the size of the
 * message around it, and the connection stays. Text and binary messages are
 * read alike, bytes decoded as UTF-8 as on the local socket.
 */
function acceptedTransport(ws: WebSocket, raw: Socket): Transport {
  // Taken over now, in the upgrade callback, before any byte reaches `ws`;
  // nothing is read until the connection listens.
  ws.pause();
  const inbound = new Inbound(ws);
  const intercepted = interceptWebSocketData(
    raw,
    {
      data: (bytes) => inbound.push(bytes),
      messageEnd: () => inbound.push(NEWLINE),
      violation: (reason) => inbound.inOrder(() => closeSoon(ws, 1002, reason)),
    },
    (pass) => inbound.inOrder(pass),
  );
  // Never reached with the `ws` this build pins; refuse rather than misread.
  if (!intercepted) closeSoon(ws, 1011, "cannot read this WebSocket");
  const reader: FrameReader = {
    listen(handlers) {
      inbound.listen(handlers);
      ws.on("error", () => {});
      ws.on("close", () => inbound.close());
      ws.resume();
    },
    pause: () => inbound.pause(),
    resume: () => inbound.resume(),
  };
  const writer = webSocketWriter(ws, raw, { code: 1001, reason: "instance stopping" });
  return { kind: "ws", reader, writer, peer: tcpPeer(raw) };
}

/**
 * The dialing side (a mesh link, once open): the server's frames come
 * unmasked, which the stream reader refuses, so whole messages are read —
 * bounded by the dialer's own `maxPayload`. Read through the same fair share
 * as every accepted connection.
 */
export function dialedTransport(ws: WebSocket, raw: Socket): Transport {
  ws.pause();
  const inbound = new Inbound(ws);
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
    const bytes = Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.isBuffer(data)
        ? data
        : Buffer.from(data);
    inbound.push(bytes);
    inbound.push(NEWLINE);
  });
  const reader: FrameReader = {
    listen(handlers) {
      inbound.listen(handlers);
      ws.on("error", () => {});
      ws.on("close", () => inbound.close());
      if (ws.readyState !== ws.OPEN) inbound.close();
      else ws.resume();
    },
    pause: () => inbound.pause(),
    resume: () => inbound.resume(),
  };
  return { kind: "ws", reader, writer: webSocketWriter(ws, raw, { code: 1000 }) };
}

/** The one writer of a WebSocket, either side: a frame is a message ending
 * in a newline; what one turn writes leaves in one write (coalesce.ts). */
function webSocketWriter(
  ws: WebSocket,
  raw: Socket,
  closing: { code: number; reason?: string },
): FrameWriter {
  return {
    write(line, done) {
      if (ws.readyState !== ws.OPEN) return done?.(false);
      corkForTurn(raw);
      if (done === undefined) ws.send(`${line}\n`);
      else ws.send(`${line}\n`, (error) => done(error == null));
    },
    backlog: () => ws.bufferedAmount,
    // `ws` has no drain event of its own; its socket's is the same signal.
    onDrain: (listener) => raw.on("drain", listener),
    close: (code, reason) =>
      closeSoon(ws, code ?? closing.code, (reason ?? closing.reason)?.slice(0, 120)),
  };
}

/** Start the close handshake; a peer that never answers it (a black hole)
 * is cut a second later. */
function closeSoon(ws: WebSocket, code: number, reason: string | undefined): void {
  ws.close(code, reason);
  setTimeout(() => ws.terminate(), 1000).unref();
}
