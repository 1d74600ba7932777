import type { Server } from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import type { HttpHandlers } from "./bind.js";
import type { Gate } from "./gate.js";

/**
 * What answers on the HTTP listener once it loads (bind.ts): the gate's
 * stages first — before the HTTP stack for a sandbox host, as its first hook
 * for every route, on every upgrade — then the routes, each plugin in its own
 * encapsulated context (`register`, the listener's list).
 */
export async function httpApp(
  server: Server,
  gate: Gate,
  register: (app: FastifyInstance) => void,
): Promise<HttpHandlers> {
  let request: HttpHandlers["request"] = () => {};
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    serverFactory: (handler) => {
      request = handler;
      return server;
    },
  });
  app.addHook("onRequest", gate.onRequest);
  register(app);
  await app.ready();
  return { request: gate.hostedFirst(request), upgrade: gate.upgrade, close: () => app.close() };
}
