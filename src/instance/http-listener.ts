import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { isLoopbackHost, parseHostPort } from "../address.js";
import { type ControlPaneDeps, controlPanePlugin } from "../board/http.js";
import { type InstanceRun, loadOrMintOwnerSecret } from "../owner-credential.js";
import { type TestHooks, testHooksPlugin } from "./test-hooks.js";
import type { Accept } from "./wire/transport.js";

export interface HttpListenerOptions {
  /** `host:port` (port 0 = ephemeral). */
  listen: string;
  accept: Accept;
  controlPane: ControlPaneDeps;
  testHooks?: TestHooks;
  log: Logger;
  /** The owner credential's file, this run (one-time links are bound to it)
   * and the instance clock. */
  owner: { secretPath: string; run: InstanceRun; now(): number };
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
  const [{ listenHttp }, { OwnerAuth }] = await Promise.all([
    import("./wire/http.js"),
    import("./wire/owner-auth.js"),
  ]);
  const { testHooks, owner } = options;
  const secret = loadOrMintOwnerSecret(owner.secretPath);
  return listenHttp({
    host,
    port,
    accept: options.accept,
    owner: new OwnerAuth({ secret, run: owner.run, now: owner.now }),
    plugins: (app) => {
      app.register(controlPanePlugin, options.controlPane);
      if (testHooks !== undefined) app.register(testHooksPlugin, testHooks);
    },
  });
}
