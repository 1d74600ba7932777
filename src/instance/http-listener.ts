import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { isLoopbackHost, parseHostPort } from "../address.js";
import { type ControlPaneDeps, controlPanePlugin } from "../board/http.js";
import { type TestHooks, testHooksPlugin } from "./test-hooks.js";
import type { Accept } from "./wire/transport.js";

export interface HttpListenerOptions {
  /** `host:port` (port 0 = ephemeral). */
  listen: string;
  accept: Accept;
  controlPane: ControlPaneDeps;
  testHooks?: TestHooks;
  log: Logger;
}

/**
 * The HTTP side of the instance: the WebSocket transport and each plugin in
 * its own encapsulated context. Loaded only after the local socket answers
 * (DR-0007): the HTTP stack is the heavier part of startup.
 */
export async function startHttp(
  options: HttpListenerOptions,
): Promise<{ app: FastifyInstance; address: string }> {
  const { host, port } = parseHostPort(options.listen);
  if (!isLoopbackHost(host))
    options.log.warn({ host }, "HTTP listener bound beyond loopback, as asked");
  const { listenHttp } = await import("./wire/http.js");
  const { testHooks } = options;
  return listenHttp({
    host,
    port,
    accept: options.accept,
    plugins: (app) => {
      app.register(controlPanePlugin, options.controlPane);
      if (testHooks !== undefined) app.register(testHooksPlugin, testHooks);
    },
  });
}
