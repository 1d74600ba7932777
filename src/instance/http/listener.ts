import type { IncomingMessage, Server } from "node:http";
import type { ControlPaneDeps } from "../../board/http.js";
import type { HttpConfig } from "../../config/config.js";
import { HOOK_PATH } from "../../harness/plugin/claude-paths.js";
import { isLoopbackHost, parseHostPort } from "../../net/address.js";
import { isLoopbackAddress } from "../../net/address-list.js";
import { type InstanceRun, loadOrMintOwnerSecret } from "../../state/owner-credential.js";
import type { Logger } from "../../util/logger.js";
import type { AttentionHttpDeps } from "../attention/http.js";
import type { PersonAuth } from "../auth/person-auth.js";
import type { HookAnswers } from "../hooks/answers.js";
import type { WebhookDeps } from "../llm/webhook.js";
import type { Mesh } from "../mesh/mesh.js";
import type { SandboxSide } from "../sandbox/register.js";
import type { SearchHttpDeps } from "../search/http.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { Accept } from "../wire/transport.js";
import { type BoundHttp, bindHttp, type HttpHandlers } from "./bind.js";
import type { TestHooks } from "./test-hooks.js";

export interface HttpListenerOptions {
  /** `host:port` (port 0 = ephemeral). */
  listen: string;
  accept: Accept;
  controlPane: ControlPaneDeps;
  /** The instance's store: the console's reads (console-api.ts) and the
   * person-auth records (DR-0044). */
  store: InstanceStore;
  stateDir: string;
  /** Search across sessions (`/api/search`). */
  search: SearchHttpDeps["search"];
  testHooks?: TestHooks;
  /** The sandbox origins (DR-0042): offered once bound where a browser
   * reaches `*.sandbox.localhost` — loopback, or a wildcard address. */
  sandbox: SandboxSide;
  /** The http hooks' answers (DR-0058), behind the hook route. */
  hooks: Pick<HookAnswers, "answer">;
  /** The attention queue (`/api/attention`, DR-0062); absent = not served. */
  attention?: AttentionHttpDeps;
  /** The LLM-gateway webhook (`…/webhook/<source>`); absent = every source unknown. */
  webhook?: WebhookDeps;
  log: Logger;
  /** The owner credential's file, this run (one-time links are bound to it)
   * and the instance clock. */
  owner: { secretPath: string; run: InstanceRun; now(): number };
  /** The endpoint, trusted proxies and source allowlist (config `http`). */
  network: HttpConfig;
  /** An access token's lifetime (a test hook; default ACCESS_TTL_MS). */
  accessTtlMs: number | undefined;
  /** The mesh's side: its WebSocket links and the one-off key route; the
   * listener starts it once bound. */
  mesh?: Mesh;
}

/** What a started instance tells of its HTTP port (taken-port.ts). */
export interface TakenPort {
  /** The asked HTTP address, when it was in use and a free port was bound instead. */
  httpTaken: string | undefined;
}

/**
 * The HTTP side of the instance: the request gate (gate.ts) and, behind it,
 * each plugin in its own encapsulated context — the auth routes, the mesh's
 * key route, the console's files and API, the control pane, search, the
 * webhook and (in tests) the test hooks. The listener is bound at once, after the local
 * socket answers (DR-0007); the HTTP stack behind it loads on the first
 * request (DR-0022).
 */
export async function startHttp(
  options: HttpListenerOptions,
): Promise<BoundHttp & TakenPort & { people: PersonAuth }> {
  const { host, port } = parseHostPort(options.listen);
  const { refuseBareExposure, startPeople } = await import("../auth/people.js");
  refuseBareExposure(options.listen, options.store);
  // Made once bound: its default endpoint names the port.
  let people: PersonAuth | undefined;
  if (!isLoopbackHost(host))
    options.log.warn({ host }, "HTTP listener bound beyond loopback, as asked");
  const { testHooks, owner } = options;
  const secret = loadOrMintOwnerSecret(owner.secretPath);
  const load = async (server: Server, boundPort: number) => {
    const [
      { httpApp },
      { Gate },
      { OwnerAuth },
      { authRoutesPlugin },
      { meshKeyPlugin },
      { consoleFilesPlugin },
      { controlPanePlugin },
      { consoleApiPlugin },
      { testHooksPlugin },
    ] = await Promise.all([
      import("./app.js"),
      import("./gate.js"),
      import("./owner-auth.js"),
      import("../auth/auth-routes.js"),
      import("../mesh/key-route.js"),
      import("./console-files.js"),
      import("../../board/http.js"),
      import("./console-api.js"),
      import("./test-hooks.js"),
    ]);
    const { hookRoutePlugin } = await import("./hook-route.js");
    const { searchPlugin } = await import("../search/http.js");
    const { attentionHttpPlugin } = await import("../attention/http.js");
    const { sandboxHost } = await import("../sandbox/serve.js");
    const { webhookPlugin } = await import("../llm/webhook.js");
    const { mesh } = options;
    const ownerAuth = new OwnerAuth({ secret, run: owner.run, now: owner.now });
    const gate = new Gate({
      host,
      port: boundPort,
      accept: options.accept,
      owner: ownerAuth,
      network: options.network,
      people: () => people,
      ...(mesh === undefined ? {} : { mesh }),
      hosted: sandboxHost({ ...options.sandbox, log: options.log }),
    });
    const { basePath } = gate;
    const clientIp = (req: { raw: IncomingMessage }) => gate.clientIp(req.raw);
    return httpApp(server, gate, (app) => {
      app.register(authRoutesPlugin, {
        people: () => people,
        instanceId: owner.run.instance,
        basePath,
        clientIp,
        personOf: (req) => gate.personOf(req.raw),
      });
      if (mesh !== undefined)
        app.register(meshKeyPlugin, {
          basePath,
          clientIp,
          keyRequest: (kid, body, ip) => mesh.keyRequest(kid, body, ip),
        });
      app.register(consoleFilesPlugin, {});
      app.register(controlPanePlugin, options.controlPane);
      const { stateDir } = options;
      const inbox = options.store.inbox;
      app.register(consoleApiPlugin, { inbox, stateDir, now: owner.now });
      app.register(hookRoutePlugin, { stateDir, hooks: options.hooks });
      app.register(searchPlugin, { search: options.search, now: owner.now });
      if (options.attention !== undefined) app.register(attentionHttpPlugin, options.attention);
      app.register(webhookPlugin, {
        ...(options.webhook ?? { sources: {}, ingest: () => {} }),
        // The person's own gateway on this machine: the owner's bearer secret.
        owner: (req) => {
          const who = ownerAuth.authenticate(req.headers);
          return isLoopbackAddress(clientIp(req)) && who?.kind === "owner" && who.via === "bearer";
        },
      });
      if (testHooks !== undefined)
        app.register(testHooksPlugin, { ...testHooks, mesh: options.mesh });
    });
  };
  const bound = await bindOrMove(options, host, port, load);
  if (isLoopbackHost(host) || host === "0.0.0.0" || host === "::")
    options.sandbox.offer(parseHostPort(bound.address).port);
  // Bound: the mesh knows its endpoint now and dials its peers.
  options.mesh?.startOn(bound.address, options.network.endpoint);
  // The plugin's http hooks follow this port (DR-0058), off the start path.
  void import("../../harness/plugin/retarget.js")
    .then((m) => m.retargetClaudeHooks(options.stateDir, `http://${bound.address}/`, HOOK_PATH))
    .then(
      (moved) => moved && options.log.info({ http: bound.address }, "plugin hooks follow the port"),
      (error: unknown) => options.log.warn({ err: error }, "plugin hooks not retargeted"),
    );
  people = startPeople({
    ...{ id: owner.run.instance, address: bound.address, config: options.network },
    ...{ store: options.store, now: owner.now, log: options.log },
    accessTtlMs: options.accessTtlMs,
  });
  return { ...bound, people };
}

/** Bind `host:port`; when it is in use, a free port on the same host instead,
 * unless something names that port (taken-port.ts). */
async function bindOrMove(
  options: HttpListenerOptions,
  host: string,
  port: number,
  load: (server: Server, port: number) => Promise<HttpHandlers>,
): Promise<BoundHttp & TakenPort> {
  try {
    return { ...(await bindHttp(host, port, load)), httpTaken: undefined };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    const { pinnedBy, portTaken } = await import("./taken-port.js");
    const why = pinnedBy(options);
    if (why !== undefined) throw portTaken(options.listen, why);
    const bound = await bindHttp(host, 0, load);
    options.log.warn(
      { taken: options.listen, bound: bound.address },
      "HTTP port in use: bound a free one",
    );
    return { ...bound, httpTaken: options.listen };
  }
}
