import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { HttpConfig } from "../../config/config.js";
import { CODEX_HOOK_PATH, HOOK_PATH } from "../../harness/plugin/claude-paths.js";
import { addressList, clientAddress, contains, isLoopbackAddress } from "../../net/address-list.js";
import { VERSION } from "../../util/version.js";
import { AUTH_ROUTES } from "../auth/auth-routes.js";
import type { PersonAuth, PersonToken } from "../auth/person-auth.js";
import { WEBHOOK_PATH } from "../llm/webhook-path.js";
import { isMeshKeyPath } from "../mesh/key-route.js";
import { type Accept, MESH_SUBPROTOCOL } from "../wire/transport.js";
import { WebSocketAcceptor } from "../wire/ws.js";
import { meshOnly, personal } from "./admitted.js";
import { ASSET_PATH } from "./console-files.js";
import { hostAndOriginRule } from "./host-origin.js";
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

export interface GateOptions {
  /** The host and port the listener is bound to (the Host and Origin rule). */
  host: string;
  port: number;
  /** Where an admitted WebSocket goes (the connection layer). */
  accept: Accept;
  /** Who may connect: every route and the upgrade need the owner's proof. */
  owner: OwnerAuth;
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
  /** The mesh (DR-0047): links open with the mesh subprotocol and no
   * credential, and the one-off key route; absent = neither is let in. */
  mesh?: MeshAdmissionSide;
}

/** A request or an upgrade, as the stages read it. */
interface Asked {
  readonly raw: IncomingMessage;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  /** The client, as recovered through trusted proxies. */
  readonly ip: string | undefined;
  /** The request target (parsed on first read: the first stages need none). */
  readonly url: URL;
  /** Who it speaks for, once the principal stage found someone… */
  principal?: Principal;
  /** …or why no one. */
  refusal?: AuthAnswer;
}

/** A stage let the request through to the routes. */
const THROUGH = Symbol("through");
/** A request stage answers (an AuthAnswer), lets through, or passes on (undefined). */
type RequestStage = (asked: Asked) => AuthAnswer | typeof THROUGH | undefined;

/** An upgrade stage refuses — with a bare status line or an answer with a
 * body — hands the socket on (ACCEPTED), or passes on (undefined). */
const ACCEPTED = Symbol("accepted");
type UpgradeRefusal = 403 | 404 | AuthAnswer;
interface Upgrade {
  req: IncomingMessage;
  socket: Socket;
  head: Buffer;
}
type UpgradeStage = (
  asked: Asked,
  upgrade: Upgrade,
) => UpgradeRefusal | typeof ACCEPTED | undefined;

/**
 * The request gate (contract §1.1): who may reach the HTTP listener, as a
 * fixed pipeline of named stages, each of which either answers or passes on,
 * in exactly this order — like dispatch's (dispatch.ts).
 *
 * A request: a sandbox host (answered apart, before everything: DR-0042) →
 * source allowlist → Host and Origin → the open routes (webhook, auth, mesh
 * key, owner sign-in link) → principal (the owner's proof from this machine,
 * or a person's access token) → the console's sign-in pages, else the
 * principal's refusal → the routes (the listener's plugins).
 *
 * An upgrade: source allowlist → a `/ws` path → Host and Origin → mesh
 * admission (the mesh subprotocol, no credential) → principal → a person's
 * Origin → the WebSocket (wire/ws.ts), which frames past a person's token
 * deadline never reach.
 */
export class Gate {
  /** The endpoint's path (`/` or a reverse proxy's prefix ending in `/`). */
  readonly basePath: string;
  private readonly owner: OwnerAuth;
  private readonly people: () => PersonAuth | undefined;
  private readonly trusted: ReturnType<typeof addressList>;
  private readonly allowed: ReturnType<typeof addressList> | undefined;
  private readonly admit: ReturnType<typeof hostAndOriginRule>;
  private readonly authPaths: Set<string>;
  private readonly meshAdmission: MeshAdmission | undefined;
  private readonly sockets = new WebSocketAcceptor();
  /** Who each request that passed speaks for (the auth routes read it). */
  private readonly principals = new WeakMap<IncomingMessage, Principal>();

  constructor(private readonly options: GateOptions) {
    const network = options.network ?? {};
    this.owner = options.owner;
    this.people = options.people ?? (() => undefined);
    this.trusted = addressList(network.trusted_proxies ?? []);
    this.allowed = network.source_ips === undefined ? undefined : addressList(network.source_ips);
    this.basePath = network.endpoint === undefined ? "/" : new URL(network.endpoint).pathname;
    this.admit = hostAndOriginRule(options.host, options.port, network.endpoint);
    this.authPaths = new Set(AUTH_ROUTES.map((r) => `${this.basePath}auth/${r}`));
    this.meshAdmission = options.mesh && new MeshAdmission(options.mesh);
  }

  /** The client's address, as recovered through trusted proxies. */
  readonly clientIp = (req: IncomingMessage): string | undefined =>
    clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], this.trusted);

  /** The person whose access token let `req` through, if one did. */
  readonly personOf = (req: IncomingMessage): PersonToken | undefined => {
    const found = this.principals.get(req);
    return found?.kind === "person" ? found.person : undefined;
  };

  /** Stage 0, before the HTTP stack: a sandbox host never reaches it. */
  hostedFirst(
    console: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    const { hosted } = this.options;
    return hosted === undefined
      ? console
      : (req, res) => (hosted(req.headers.host) ?? console)(req, res);
  }

  /** The request stages, as the HTTP stack's first `onRequest` hook: every
   * route, the plugins' included. */
  readonly onRequest = async (req: FastifyRequest, reply: FastifyReply) => {
    const asked = this.asked(req.raw, req.method, req.url);
    for (const stage of this.requestStages) {
      const verdict = stage(asked);
      if (verdict === THROUGH) return;
      if (verdict !== undefined)
        return reply.code(verdict.status).headers(verdict.headers).send(verdict.body);
    }
  };

  /** The upgrade stages: an upgrade either refused or handed on. */
  readonly upgrade = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    const asked = this.asked(req, req.method ?? "GET", req.url ?? "");
    for (const stage of this.upgradeStages) {
      const verdict = stage(asked, { req, socket, head });
      if (verdict === undefined) continue;
      if (verdict === 403) socket.end(BARE_403);
      else if (verdict === 404) socket.end(BARE_404);
      else if (verdict !== ACCEPTED) refuseUpgrade(socket, verdict);
      return;
    }
  };

  private asked(raw: IncomingMessage, method: string, target: string): Asked {
    let url: URL | undefined;
    return {
      raw,
      method,
      headers: raw.headers,
      ip: this.clientIp(raw),
      get url() {
        url ??= new URL(target, "http://ccmsg.invalid");
        return url;
      },
    };
  }

  // --- the shared rules -------------------------------------------------

  /** The source allowlist comes before everything else (contract §1.1). */
  private outside(ip: string | undefined): boolean {
    return this.allowed !== undefined && (ip === undefined || !contains(this.allowed, ip));
  }

  /** Who a request speaks for: the owner (from loopback only), a person's
   * access token (Bearer, or the `ccmsg.token.` subprotocol), or why not —
   * an expired token says so. */
  private who(headers: IncomingHttpHeaders, ip: string | undefined): Principal | AuthAnswer {
    const local = isLoopbackAddress(ip);
    if (local) {
      const o = this.owner.authenticate(headers);
      if (o !== undefined) return o;
    }
    const p = this.people();
    const offered = offeredProtocols(headers)
      .filter((x) => x.startsWith(SUBPROTOCOL_PREFIX))
      .map((x) => x.slice(SUBPROTOCOL_PREFIX.length));
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
    let refusal: AuthAnswer = local ? UNAUTHENTICATED : PEOPLE_ONLY;
    if (p === undefined) return refusal;
    for (const token of [bearer, ...offered]) {
      if (token === undefined) continue;
      const found = p.person(token);
      if (typeof found === "object") return { kind: "person", person: found, token };
      if (found === "expired") refusal = ACCESS_EXPIRED;
    }
    return refusal;
  }

  // --- the request stages, in order -------------------------------------

  private readonly requestStages: RequestStage[] = [
    (a) => this.sourceAllowed(a),
    (a) => this.hostAndOrigin(a),
    (a) => this.openRoutes(a),
    (a) => this.principal(a),
    (a) => this.healthForAnyone(a),
    (a) => this.signInPages(a),
  ];

  private sourceAllowed({ ip }: Asked): AuthAnswer | undefined {
    return this.outside(ip) ? forbidden("this address is not allowed here") : undefined;
  }

  private hostAndOrigin({ headers }: Asked): AuthAnswer | undefined {
    const refused = this.admit(headers.host, headers.origin);
    return refused === undefined ? undefined : forbidden(refused);
  }

  /** The routes no credential of this instance opens: the webhook, whose
   * sources prove themselves with their own tokens (instance/llm/webhook.ts);
   * the four auth routes, which are how a person gets a token; the mesh key
   * route, which a peer asks with no credential here and no browser has any
   * business asking (any Origin is refused); and the one-time link, which is
   * how a browser gets the owner's cookie; the hook routes, from this machine
   * only, whose token (hook-route.ts) opens nothing else. */
  private openRoutes({ method, url, headers, ip }: Asked): AuthAnswer | typeof THROUGH | undefined {
    if (method === "POST" && WEBHOOK_PATH.test(url.pathname)) return THROUGH;
    if (method === "POST" && (url.pathname === HOOK_PATH || url.pathname === CODEX_HOOK_PATH))
      return isLoopbackAddress(ip) ? THROUGH : PEOPLE_ONLY;
    if (method === "POST" && this.authPaths.has(url.pathname)) return THROUGH;
    if (
      this.options.mesh !== undefined &&
      method === "POST" &&
      isMeshKeyPath(this.basePath, url.pathname)
    )
      return headers.origin === undefined ? THROUGH : forbidden("no Origin may ask for a mesh key");
    if (method === "GET" && url.pathname.endsWith(SIGN_IN_PATH))
      return isLoopbackAddress(ip)
        ? this.owner.signIn(url.pathname, url.searchParams.get("token") ?? undefined)
        : PEOPLE_ONLY;
    return undefined;
  }

  /** The owner's proof (from this machine) or a person's access token,
   * recorded for the routes behind (a person's sign-out). */
  private principal(asked: Asked): typeof THROUGH | undefined {
    const found = this.identify(asked);
    if (found === undefined) return undefined;
    this.principals.set(asked.raw, found);
    return THROUGH;
  }

  /** Notes who the request speaks for, or why no one. */
  private identify(asked: Asked): Principal | undefined {
    const found = this.who(asked.headers, asked.ip);
    if ("kind" in found) asked.principal = found;
    else asked.refusal = found;
    return asked.principal;
  }

  /** No one, from this machine, asking whether an instance runs here (a
   * status bar, a health check: issue 28): `GET /api/health` without any
   * credential answers that and the version, nothing else. A credential that
   * is wrong is still refused, and the owner gets the full answer. A browser
   * (its `Sec-Fetch-Dest`, which no page can leave out; Node's fetch sends
   * none) gets the owner rule: the console probes this route to learn
   * whether it is signed in. */
  private healthForAnyone({ method, url, headers, ip }: Asked): AuthAnswer | undefined {
    if (method !== "GET" || url.pathname !== `${this.basePath}api/health`) return undefined;
    if (!isLoopbackAddress(ip) || headers.authorization !== undefined) return undefined;
    if (headers.cookie !== undefined || offeredProtocols(headers).length > 0) return undefined;
    if (headers["sec-fetch-dest"] !== undefined) return undefined;
    return {
      status: 200,
      headers: { "cache-control": "no-store" },
      body: { ok: true, version: VERSION },
    };
  }

  /** No one: while passkeys are in use, the console's page and files are
   * its sign-in page — they hold no data, and everything they read needs a
   * token. A browser opening the page without the owner's cookie is told how
   * to get it, in a page rather than JSON. Anything else is refused. */
  private signInPages({ method, url, headers, refusal = UNAUTHENTICATED }: Asked) {
    const api = url.pathname.startsWith("/api/");
    const page = method === "GET" && url.pathname.endsWith("/") && !api;
    if (
      method === "GET" &&
      (page || (!api && ASSET_PATH.test(url.pathname))) &&
      this.people()?.inUse() === true
    )
      return THROUGH;
    return refusal === UNAUTHENTICATED && page && (headers.accept ?? "").includes("text/html")
      ? UNAUTHENTICATED_PAGE
      : refusal;
  }

  // --- the upgrade stages, in order -------------------------------------

  private readonly upgradeStages: UpgradeStage[] = [
    (a) => bare(this.sourceAllowed(a)),
    (_a, { req }) => webSocketPath(req),
    (a) => bare(this.hostAndOrigin(a)),
    (a, u) => this.meshSocket(a, u),
    (a) => this.upgradePrincipal(a),
    (a) => this.personOrigin(a),
    (a, u) => this.webSocket(a, u),
  ];

  /** A mesh peer holds no credential of this instance (admitted.ts), and no
   * browser page may open its socket. */
  private meshSocket(
    { headers, ip }: Asked,
    { req, socket, head }: Upgrade,
  ): UpgradeRefusal | typeof ACCEPTED | undefined {
    const mesh = this.options.mesh;
    if (mesh === undefined || !offeredProtocols(headers).includes(MESH_SUBPROTOCOL))
      return undefined;
    if (headers.origin !== undefined) return 403;
    const refused = this.meshAdmission?.admit(ip ?? "", socket);
    if (refused !== undefined) return refused;
    this.sockets.accept(req, socket, head, MESH_SUBPROTOCOL, (ws) =>
      this.options.accept(meshOnly(ws, mesh.greetingMs)),
    );
    return ACCEPTED;
  }

  private upgradePrincipal(asked: Asked): AuthAnswer | undefined {
    return this.identify(asked) === undefined ? asked.refusal : undefined;
  }

  /** A person's socket must come from the web UI the family was minted for;
   * a missing Origin (not a browser) is refused (contract §9.5). */
  private personOrigin({ headers, principal }: Asked): 403 | undefined {
    return principal?.kind === "person" && headers.origin !== principal.person.webui
      ? 403
      : undefined;
  }

  /** The WebSocket, echoing the credential's subprotocol (contract §1.1); a
   * person's is theirs until their token's deadline (admitted.ts). */
  private webSocket(
    { headers, principal }: Asked,
    { req, socket, head }: Upgrade,
  ): typeof ACCEPTED | undefined {
    if (principal === undefined) return undefined;
    const offered = offeredProtocols(headers);
    let protocol: string | undefined;
    if (principal.kind === "person") {
      const mine = `${SUBPROTOCOL_PREFIX}${principal.token}`;
      protocol = offered.includes(mine) ? mine : undefined;
    } else protocol = this.owner.subprotocol(offered);
    this.sockets.accept(req, socket, head, protocol, (ws) => {
      const p = this.people();
      this.options.accept(
        principal.kind === "person" && p !== undefined
          ? personal(ws, principal.person, p)
          : ws.transport,
      );
    });
    return ACCEPTED;
  }
}

const BARE_403 = "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n";
const BARE_404 = "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n";

/** WebSocket at any path ending in `/ws`, so a reverse proxy may add a prefix. */
function webSocketPath(req: IncomingMessage): 404 | undefined {
  return (req.url ?? "").split("?")[0]!.endsWith("/ws") ? undefined : 404;
}

/** An upgrade refused before any credential is read gets a bare status line. */
function bare(answer: AuthAnswer | undefined): 403 | undefined {
  return answer === undefined ? undefined : 403;
}

function forbidden(error: string): AuthAnswer {
  return { status: 403, headers: {}, body: { ok: false, error } };
}
