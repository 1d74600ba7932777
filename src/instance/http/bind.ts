import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** What answers on a bound HTTP listener (app.ts builds it). */
export interface HttpHandlers {
  request(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void;
  close(): Promise<void>;
}

export interface BoundHttp {
  /** `host:port` as bound (IPv6 in brackets). */
  address: string;
  /** Stop listening and close idle connections (and the handlers, if loaded). */
  close(): Promise<void>;
}

/**
 * Bind an HTTP listener now, and load what answers on it when its first
 * request or upgrade arrives (DR-0022): the HTTP stack (Fastify, `ws`, the
 * control pane) is most of an idle instance's memory and of its start, and
 * many instances never see a request. What arrives while it loads waits for
 * it; a load that fails answers 500 (or drops the upgrade) and the next
 * request tries again.
 */
export async function bindHttp(
  host: string,
  port: number,
  load: (server: Server, port: number) => Promise<HttpHandlers>,
): Promise<BoundHttp> {
  const server = createServer();
  // Fastify's defaults, which the server it made itself had.
  server.keepAliveTimeout = 72_000;
  server.requestTimeout = 0;
  const boundPort = () => {
    const bound = server.address();
    return typeof bound === "object" && bound !== null ? bound.port : port;
  };
  let handlers: HttpHandlers | undefined;
  let loading: Promise<HttpHandlers> | undefined;
  const ready = () => {
    loading ??= load(server, boundPort()).then(
      (loaded) => {
        handlers = loaded;
        return loaded;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (handlers !== undefined) return handlers.request(req, res);
    ready().then(
      (h) => h.request(req, res),
      () => {
        res.statusCode = 500;
        res.end();
      },
    );
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (handlers !== undefined) return handlers.upgrade(req, socket, head);
    ready().then(
      (h) => h.upgrade(req, socket, head),
      () => socket.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    address: `${host.includes(":") ? `[${host}]` : host}:${boundPort()}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await (loading ?? Promise.resolve(undefined)).then(
        (h) => h?.close(),
        () => {},
      );
      await closed;
    },
  };
}
