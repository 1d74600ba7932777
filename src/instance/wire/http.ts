import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import type { HttpConfig } from "../../config/config.js";
import { isLoopbackHost, isSandboxName } from "../../net/address.js";
import { addressList, clientAddress, contains, isLoopbackAddress } from "../../net/address-list.js";
import { authRoutes, refreshCookieHeader } from "../auth/auth-routes.js";
import type { PersonAuth } from "../auth/person-auth.js";
import { PersonSession } from "../auth/person-session.js";
import { WEBHOOK_PATH } from "../llm/webhook-path.js";
import type { ConsoleFiles } from "./console-files.js";
import type { HttpHandlers } from "./http-bind.js";
import { MeshAdmission, type MeshAdmissionSide } from "./mesh-admission.js";
import {
  ACCESS_EXPIRED,
  type AuthAnswer,
  type OwnerAuth,
  offeredProtocols,
  PEOPLE_ONLY,
  type Principal,
  refuseUpgrade,
  SIGN_IN_PATH,
  SUBPROTOCOL_PREFIX,
  UNAUTHENTICATED,
  UNAUTHENTICATED_PAGE,
} from "./owner-auth.js";
import { type Accept, type FrameReader, MESH_SUBPROTOCOL } from "./transport.js";
import { WebSocketAcceptor } from "./ws.js";

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
  /** The endpoint, trusted proxies and source allowlist (config `http`). */
  network?: HttpConfig;
  /** Person authentication (DR-0044); absent or undefined = owner only. */
  people?: () => PersonAuth | undefined;
  instanceId?: string;
  /** The mesh (DR-0047): links open with the mesh subprotocol and no
   * credential, and the one-off key route; absent = neither is served. */
  mesh?: MeshHttpSide;
}

/** What the listener asks the mesh (instance/mesh/mesh.ts). */
export interface MeshHttpSide extends MeshAdmissionSide {
  /** Answer `POST <endpoint>mesh/jwk/<kid>` (body `{challenge}`). */
  keyRequest(kid: string, body: unknown, ip: string | undefined): { status: number; body: object };
}

/** The key route's path below the endpoint's; kids are base64url. */
const MESH_KEY_PATH = /mesh\/jwk\/([A-Za-z0-9_-]{16,128})$/;

/** The console's hashed files (console-files.ts): no data in them. */
const ASSET_PATH = /\/assets\/[A-Za-z0-9_.-]+$/;

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
  const network = options.network ?? {};
  const trusted = addressList(network.trusted_proxies ?? []);
  const allowed = network.source_ips === undefined ? undefined : addressList(network.source_ips);
  const basePath = network.endpoint === undefined ? "/" : new URL(network.endpoint).pathname;
  const people = options.people ?? (() => undefined);
  const clientOf = (req: IncomingMessage) =>
    clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trusted);
  // The source allowlist comes before everything else (contract §1.1).
  const outside = (ip: string | undefined) =>
    allowed !== undefined && (ip === undefined || !contains(allowed, ip));
  /** Who a request speaks for: the owner (from loopback only), a person's
   * access token (Bearer, or the `ccmsg.token.` subprotocol), or why not. */
  const who = (headers: IncomingMessage["headers"], ip: string | undefined) => {
    const local = isLoopbackAddress(ip);
    if (local) {
      const o = owner.authenticate(headers);
      if (o !== undefined) return o;
    }
    const p = people();
    const offered = offeredProtocols(headers)
      .filter((x) => x.startsWith(SUBPROTOCOL_PREFIX))
      .map((x) => x.slice(SUBPROTOCOL_PREFIX.length));
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
    let refusal: AuthAnswer = local ? UNAUTHENTICATED : PEOPLE_ONLY;
    if (p === undefined) return refusal;
    for (const token of [bearer, ...offered]) {
      if (token === undefined) continue;
      const found = p.person(token);
      if (typeof found === "object") return { kind: "person", person: found, token } as Principal;
      if (found === "expired") refusal = ACCESS_EXPIRED;
    }
    return refusal;
  };
  const principals = new WeakMap<IncomingMessage, Principal>();
  const sockets = new WebSocketAcceptor();
  const admit = hostAndOriginRule(options.host, options.port, network.endpoint);
  const meshAdmission = options.mesh && new MeshAdmission(options.mesh);

  const upgrade = (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const ip = clientOf(req);
    if (outside(ip)) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
      return;
    }
    const path = (req.url ?? "").split("?")[0]!;
    if (!path.endsWith("/ws")) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    if (admit(req.headers.host, req.headers.origin) !== undefined) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
      return;
    }
    const offered = offeredProtocols(req.headers);
    // A mesh peer holds no credential of this instance: its socket may only
    // greet as an instance and prove its endpoint (mesh/mesh.ts), and no
    // browser page may open one.
    const mesh = options.mesh;
    if (mesh !== undefined && offered.includes(MESH_SUBPROTOCOL)) {
      if (req.headers.origin !== undefined) {
        socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
        return;
      }
      const refused = meshAdmission?.admit(ip ?? "", socket);
      if (refused !== undefined) return refuseUpgrade(socket, refused);
      sockets.accept(req, socket, head, MESH_SUBPROTOCOL, ({ transport, onClose }) => {
        // Unauthenticated until it greets: a socket that never speaks is cut
        // (the handshake's own timer runs from its greeting on).
        const silent = setTimeout(
          () => transport.writer.close(4001, "no greeting"),
          mesh.greetingMs,
        );
        silent.unref();
        onClose(() => clearTimeout(silent));
        const reader: FrameReader = {
          ...transport.reader,
          listen: (handlers) =>
            transport.reader.listen({
              ...handlers,
              frame: (line) => {
                clearTimeout(silent);
                handlers.frame(line);
              },
            }),
        };
        options.accept({ ...transport, reader, meshOnly: true });
      });
      return;
    }
    const principal = who(req.headers, ip);
    if (!("kind" in principal)) return refuseUpgrade(socket, principal);
    let protocol: string | undefined;
    if (principal.kind === "person") {
      // A person's socket must come from the web UI the family was minted
      // for; a missing Origin (not a browser) is refused (contract §9.5).
      if (req.headers.origin !== principal.person.webui) {
        socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
        return;
      }
      const mine = `${SUBPROTOCOL_PREFIX}${principal.token}`;
      protocol = offered.includes(mine) ? mine : undefined;
    } else protocol = owner.subprotocol(offered);
    sockets.accept(req, socket, head, protocol, ({ transport, onClose }) => {
      const p = people();
      let person: PersonSession | undefined;
      if (principal.kind === "person" && p !== undefined) {
        const { sub, familyId, expiresAt } = principal.person;
        const session = new PersonSession(
          sub,
          familyId,
          expiresAt,
          () => p.now(),
          (why) => transport.writer.close(4001, why),
        );
        const untrack = p.track({ sub, familyId, close: () => session.close("access revoked") });
        onClose(() => {
          untrack();
          session.dispose();
        });
        person = session;
      }
      // Past the deadline no frame is served, whenever the timer fires.
      const session = person;
      const reader: typeof transport.reader =
        session === undefined || p === undefined
          ? transport.reader
          : {
              ...transport.reader,
              listen: (handlers) =>
                transport.reader.listen({
                  ...handlers,
                  frame: (line) => {
                    if (p.now() >= session.expiresAt) session.close("access token expired");
                    else handlers.frame(line);
                  },
                }),
            };
      options.accept({ ...transport, reader, ...(person === undefined ? {} : { person }) });
    });
  };
  const isMeshKeyPath = (path: string) =>
    path.startsWith(`${basePath}mesh/jwk/`) &&
    path.length > basePath.length &&
    MESH_KEY_PATH.test(path.slice(basePath.length));
  const authPaths = new Set(
    ["challenge", "register", "assert", "refresh"].map((r) => `${basePath}auth/${r}`),
  );
  // Every route, the plugins' included: the source allowlist, the same Host
  // and Origin rule, then the owner's proof (from this machine) or a
  // person's access token — except on the one-time link, which is how a
  // browser gets the owner's cookie, the four auth routes, which are how a
  // person gets a token, and the webhook, whose sources prove themselves
  // with their own tokens (instance/llm/webhook.ts).
  app.addHook("onRequest", async (req, reply) => {
    const ip = clientOf(req.raw);
    if (outside(ip))
      return reply.code(403).send({ ok: false, error: "this address is not allowed here" });
    const refused = admit(req.headers.host, req.headers.origin);
    if (refused !== undefined) return reply.code(403).send({ ok: false, error: refused });
    const url = new URL(req.url, "http://ccmsg.invalid");
    if (req.method === "POST" && WEBHOOK_PATH.test(url.pathname)) return;
    if (req.method === "POST" && authPaths.has(url.pathname)) return;
    // The mesh key route: a peer has no credential here, and no browser
    // has any business asking (any Origin is refused).
    if (options.mesh !== undefined && req.method === "POST" && isMeshKeyPath(url.pathname)) {
      if (req.headers.origin !== undefined)
        return reply.code(403).send({ ok: false, error: "no Origin may ask for a mesh key" });
      return;
    }
    if (req.method === "GET" && url.pathname.endsWith(SIGN_IN_PATH)) {
      const answer = isLoopbackAddress(ip)
        ? owner.signIn(url.pathname, url.searchParams.get("token") ?? undefined)
        : PEOPLE_ONLY;
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    }
    const principal = who(req.headers, ip);
    if ("kind" in principal) {
      principals.set(req.raw, principal);
      return;
    }
    const api = url.pathname.startsWith("/api/");
    const page = req.method === "GET" && url.pathname.endsWith("/") && !api;
    // While passkeys are in use, the console's page and files are its
    // sign-in page: they hold no data, and everything they read needs a token.
    if (
      req.method === "GET" &&
      (page || (!api && ASSET_PATH.test(url.pathname))) &&
      people()?.inUse() === true
    )
      return;
    // A browser opening the console's page without the cookie is told how to
    // get it, in a page rather than JSON.
    const answer =
      principal === UNAUTHENTICATED && page && (req.headers.accept ?? "").includes("text/html")
        ? UNAUTHENTICATED_PAGE
        : principal;
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
  app.register(async (auth) => {
    auth.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) =>
      reply.code(error.statusCode === 413 ? 413 : 400).send({
        ok: false,
        error: { code: "bad_request", msg: `the body could not be read: ${error.message}` },
      }),
    );
    const deps = {
      people,
      instanceId: options.instanceId ?? "",
      basePath,
      clientIp: (r: { raw: IncomingMessage }) => clientOf(r.raw),
    };
    authRoutes(auth, deps);
    const mesh = options.mesh;
    if (mesh !== undefined)
      auth.post(`${basePath}mesh/jwk/:kid`, async (req, reply) => {
        const kid = MESH_KEY_PATH.exec(new URL(req.url, "http://ccmsg.invalid").pathname)?.[1];
        const answer =
          kid === undefined
            ? { status: 404, body: { ok: false, error: "no such key" } }
            : mesh.keyRequest(kid, req.body, clientOf(req.raw));
        return reply.code(answer.status).header("cache-control", "no-store").send(answer.body);
      });
    const personOf = (raw: IncomingMessage) => {
      const found = principals.get(raw);
      const p = people();
      return found?.kind === "person" && p !== undefined ? { found, p } : undefined;
    };
    const notPerson = { ok: false, code: "forbidden", error: "only a person's access token may" };
    // The console's own: sign out (kill this family, drop the cookie) and
    // add another device to the person signed in.
    auth.post("/api/auth/signout", async (req, reply) => {
      const who = personOf(req.raw);
      if (who === undefined) return reply.code(403).send(notPerson);
      await who.p.signOut(who.found.person.familyId);
      return reply
        .header(
          "set-cookie",
          refreshCookieHeader({ ...deps, secure: who.p.secure }, who.found.person.sub, "", 0),
        )
        .send({ ok: true });
    });
    auth.post("/api/auth/add-device", async (req, reply) => {
      const who = personOf(req.raw);
      if (who === undefined) return reply.code(403).send(notPerson);
      const { url, code, expires_at } = who.p.addPasskey(undefined, who.found.person.sub);
      return reply.header("cache-control", "no-store").send({ ok: true, url, code, expires_at });
    });
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
  endpoint?: string,
): (host: string | undefined, origin: string | undefined) => string | undefined {
  // The public endpoint (a reverse proxy's name) is this instance too.
  const publicUrl = endpoint === undefined ? undefined : new URL(endpoint);
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
    const isPublic = publicUrl !== undefined && host?.toLowerCase() === publicUrl.host;
    if (!wildcard && !isPublic && (host === undefined || !ours(host)))
      return "Host is not this instance";
    if (origin === undefined) return undefined;
    if (publicUrl !== undefined && origin === publicUrl.origin) return undefined;
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
