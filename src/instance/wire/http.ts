import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { type WebSocket, WebSocketServer } from "ws";
import { isLoopbackHost, isSandboxName } from "../../address.js";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { LineFramer } from "../../line-framer.js";
import { WEBHOOK_PATH } from "../llm/webhook-path.js";
import type { ConsoleFiles } from "./console-files.js";
import type { HttpHandlers } from "./http-bind.js";
import {
  type OwnerAuth,
  refuseUpgrade,
  SIGN_IN_PATH,
  UNAUTHENTICATED,
  UNAUTHENTICATED_PAGE,
} from "./owner-auth.js";
import { tcpPeer } from "./peer-endpoint.js";
import type { Accept, FrameReader, FrameWriter, Transport } from "./transport.js";
import { interceptWebSocketData } from "./ws-frames.js";

/** The `ws` library's own message limit. Data messages never reach its
 * receiver (see ws-frames.ts), so this bounds only what it reads by itself
 * while a connection closes. */
const WS_MAX_MESSAGE_BYTES = MAX_FRAME_BYTES;

export interface HttpOptions {
  /** The host and port the listener is bound to (the Host and Origin rule). */
  host: string;
  port: number;
  accept: Accept;
  /** Who may connect: every route and the upgrade need the owner's proof. */
  owner: OwnerAuth;
  /** Registers the instance's plugins (control-pane API, test hooks), each
   * encapsulated in its own Fastify context. */
  plugins?: (app: FastifyInstance) => void;
  /** The web console's files (console-files.ts); absent = none served. */
  console?: (app: FastifyInstance) => Promise<ConsoleFiles>;
  /** Hosts answered apart from everything else here (the sandbox origins,
   * DR-0042): a handler for a request whose Host it names, which then never
   * reaches the console's routes, hooks or credentials. */
  hosted?: (
    host: string | undefined,
  ) => ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
}

/**
 * What answers on the HTTP listener (bound by http-bind.ts): WebSocket at any
 * path ending in `/ws` (so a reverse proxy may add a prefix), a 426 for a
 * plain request there, the web console's page and files, 404 elsewhere.
 *
 * Until person authentication lands, a browser may connect only from this
 * instance's own origin: without that check any web page the person visits
 * could reach the loopback port and speak as them. Past that check, every
 * request and upgrade must prove it comes from the instance's owner (another
 * account on the machine reaches loopback too): owner-auth.ts.
 */
export async function httpHandlers(server: Server, options: HttpOptions): Promise<HttpHandlers> {
  let request: HttpHandlers["request"] = () => {};
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    serverFactory: (handler) => {
      request = handler;
      return server;
    },
  });
  const { owner } = options;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: WS_MAX_MESSAGE_BYTES,
    // Messages are read as a stream (ws-frames.ts), which takes no extension.
    perMessageDeflate: false,
    // Echo the credential's subprotocol (contract §1.1), and no other.
    handleProtocols: (offered) => owner.subprotocol(offered) ?? false,
  });
  const admit = hostAndOriginRule(options.host, options.port);

  const upgrade = (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (!path.endsWith("/ws")) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    if (admit(req.headers.host, req.headers.origin) !== undefined) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
      return;
    }
    if (owner.authenticate(req.headers) === undefined)
      return refuseUpgrade(socket, UNAUTHENTICATED);
    wss.handleUpgrade(req, socket, head, (ws) =>
      options.accept({ ...webSocketTransport(ws, socket), peer: tcpPeer(socket) }),
    );
  };
  // Every route, the plugins' included: the same Host and Origin rule, then
  // the owner's proof — except on the one-time link, which is how a browser
  // gets it, and on the webhook, whose sources prove themselves with their
  // own tokens (instance/llm/webhook.ts).
  app.addHook("onRequest", async (req, reply) => {
    const refused = admit(req.headers.host, req.headers.origin);
    if (refused !== undefined) return reply.code(403).send({ ok: false, error: refused });
    const url = new URL(req.url, "http://ccmsg.invalid");
    if (req.method === "POST" && WEBHOOK_PATH.test(url.pathname)) return;
    const answer =
      req.method === "GET" && url.pathname.endsWith(SIGN_IN_PATH)
        ? owner.signIn(url.pathname, url.searchParams.get("token") ?? undefined)
        : owner.authenticate(req.headers) === undefined
          ? // A browser opening the console's page without the cookie is told
            // how to get it, in a page rather than JSON.
            req.method === "GET" &&
            url.pathname.endsWith("/") &&
            (req.headers.accept ?? "").includes("text/html")
            ? UNAUTHENTICATED_PAGE
            : UNAUTHENTICATED
          : undefined;
    if (answer !== undefined)
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });

  const files = await options.console?.(app);
  app.get("/*", async (req, reply) => {
    const path = req.url.split("?")[0]!;
    if (path.endsWith("/ws")) return reply.code(426).send({ ok: false, error: "upgrade required" });
    return files?.answer(path, reply) ?? reply.code(404).send({ ok: false, error: "not found" });
  });
  options.plugins?.(app);
  await app.ready();
  const { hosted } = options;
  const console = request;
  const answer: HttpHandlers["request"] =
    hosted === undefined ? console : (req, res) => (hosted(req.headers.host) ?? console)(req, res);
  return { request: answer, upgrade, close: () => app.close() };
}

const NEWLINE = Buffer.from("\n");

/**
 * Frames over a WebSocket (README, "WebSocket messages"; DR-0013): a message
 * carries whole frames — one, or several separated by newlines — and its end
 * ends its last frame, so a frame never spans two messages. Messages are read
 * as a stream through the same line framer as the local socket: a frame over
 * MAX_FRAME_BYTES is answered `bad_request` and skipped without being held,
 * whatever the size of the message around it, and the connection stays.
 * Text and binary messages are read alike, bytes decoded as UTF-8 as on the
 * local socket.
 */
function webSocketTransport(ws: WebSocket, raw: Socket): Transport {
  let framer: LineFramer | undefined;
  // Taken over now, in the upgrade callback, before any byte reaches `ws`;
  // nothing is read until the connection listens.
  ws.pause();
  const closeWith = (code: number, reason: string) => {
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), 1000).unref();
  };
  const intercepted = interceptWebSocketData(raw, {
    data: (bytes) => framer?.push(bytes),
    messageEnd: () => framer?.push(NEWLINE),
    violation: (reason) => closeWith(1002, reason),
  });
  // Never reached with the `ws` this build pins; refuse rather than misread.
  if (!intercepted) closeWith(1011, "cannot read this WebSocket");
  const reader: FrameReader = {
    listen(handlers) {
      framer = new LineFramer(MAX_FRAME_BYTES, handlers.frame, handlers.oversized);
      ws.on("error", () => {});
      ws.on("close", handlers.closed);
      ws.resume();
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
    close: () => closeWith(1001, "instance stopping"),
  };
  return { kind: "ws", reader, writer };
}

/**
 * Who may talk to this listener (DNS rebinding, cross-site requests): the
 * `Host` must name this listener — its bound address, or any loopback name when
 * it is bound to loopback — and an `Origin`, when a browser sends one, must be
 * this listener's own `http://` origin under one of those names. A wildcard
 * bind (0.0.0.0, ::) accepts any Host until the public endpoint is configured.
 * Returns why a request is refused, or undefined.
 */
export function hostAndOriginRule(
  boundHost: string,
  port: number,
): (host: string | undefined, origin: string | undefined) => string | undefined {
  const wildcard = boundHost === "0.0.0.0" || boundHost === "::";
  const bracketed = boundHost.includes(":") ? `[${boundHost}]` : boundHost;
  const names = new Set([bracketed]);
  if (isLoopbackHost(boundHost)) for (const n of ["127.0.0.1", "localhost", "[::1]"]) names.add(n);
  const ours = (hostPort: string) => {
    const colon = hostPort.lastIndexOf(":");
    if (colon < 0 || hostPort.slice(colon + 1) !== String(port)) return false;
    return names.has(hostPort.slice(0, colon).toLowerCase());
  };
  // A sandbox name is never the console's, even under a wildcard bind: its
  // pages are files of sessions (DR-0042).
  const sandboxed = (hostPort: string) => {
    const colon = hostPort.lastIndexOf(":");
    return isSandboxName(colon < 0 ? hostPort : hostPort.slice(0, colon));
  };
  return (host, origin) => {
    if (host !== undefined && sandboxed(host)) return "Host is a sandbox, not the console";
    if (!wildcard && (host === undefined || !ours(host))) return "Host is not this instance";
    if (origin === undefined) return undefined;
    try {
      const url = new URL(origin);
      if (
        url.protocol === "http:" &&
        !isSandboxName(url.hostname) &&
        (wildcard ? url.port === String(port) : ours(url.host))
      )
        return undefined;
    } catch {}
    return "Origin is not this instance";
  };
}
