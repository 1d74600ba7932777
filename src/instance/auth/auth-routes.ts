import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  AuthAssertArgs,
  AuthChallengeArgs,
  AuthRefreshTokenArgs,
  AuthRegisterArgs,
} from "../../contract/auth.js";
import { ContractError, type ErrorCode } from "../../contract/errors.js";
import { encodeFailure, encodeReply } from "../../contract/frames.js";
import { validationErrors } from "../../contract/validate.js";
import { answerUnreadableBody } from "../http/json-reply.js";
import type { Minted, Observed, PersonAuth, PersonToken } from "./person-auth.js";
import { REFRESH_TTL_MS } from "./person-auth.js";
import { RateLimit } from "./rate-limit.js";

export { RATE_BURST, RATE_PER_S } from "./rate-limit.js";

export interface AuthRoutesDeps {
  /** Undefined until the listener is bound (then the routes answer). */
  people(): PersonAuth | undefined;
  instanceId: string;
  /** The endpoint's path (`/` or a reverse proxy's prefix ending in `/`). */
  basePath: string;
  /** The client's address as recovered through trusted proxies. */
  clientIp(req: FastifyRequest): string | undefined;
  /** The person whose access token the gate let this request in with. */
  personOf(req: FastifyRequest): PersonToken | undefined;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The routes a person gets a token by: open to anyone (the gate lets
 * them past every credential; each checks its own). */
export const AUTH_ROUTES = ["challenge", "register", "assert", "refresh"] as const;
type Route = (typeof AUTH_ROUTES)[number];

/**
 * `<endpoint>auth/challenge|register|assert|refresh` (contract §1.1, §9): the
 * carrier makes up the `request_id`; the refresh token travels only as an
 * HttpOnly cookie. The three identity-deciding routes need the web UI's
 * Origin and a `Sec-Fetch-Site` other than `none` (a typed-in URL or a
 * bookmark cannot spend anything). Beside them, the console's own: sign out
 * (kill this family, drop the cookie) and add another device to the person
 * signed in. An encapsulated plugin of the listener.
 */
export async function authRoutesPlugin(app: FastifyInstance, deps: AuthRoutesDeps): Promise<void> {
  app.setErrorHandler(answerUnreadableBody);
  const rate = new RateLimit();
  let nextId = 1;
  const handle = (route: Route) => async (req: FastifyRequest, reply: FastifyReply) => {
    const requestId = `http-${nextId++}`;
    const fail = (status: number, code: ErrorCode, msg: string) =>
      reply
        .code(status)
        .header("cache-control", "no-store")
        .type(JSON_TYPE)
        .send(encodeFailure(requestId, { code, msg }));
    const ip = deps.clientIp(req);
    const wait = rate.take(ip ?? "");
    if (wait !== undefined) {
      reply.header("retry-after", String(wait));
      // Generation 3 has no rate_limited code (Appendix B): the attempt did
      // not verify, and the status and Retry-After say why.
      return fail(429, "auth_invalid", `too many attempts: retry in ${wait} s`);
    }
    const people = deps.people();
    if (people === undefined) return fail(404, "auth_invalid", "passkeys are not set up here");
    if (route !== "challenge") {
      const origin = req.headers.origin;
      if (origin === undefined || !people.origins().has(origin))
        return fail(403, "auth_invalid", "Origin is not a web UI of this instance");
      const site = req.headers["sec-fetch-site"];
      if (site === undefined || site === "none")
        return fail(403, "auth_invalid", "Sec-Fetch-Site must name the page that asked");
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const schema = {
      challenge: AuthChallengeArgs,
      register: AuthRegisterArgs,
      assert: AuthAssertArgs,
      refresh: AuthRefreshTokenArgs,
    }[route];
    const invalid = validationErrors(schema, body);
    if (invalid.length > 0) return fail(400, "invalid_args", invalid.join("\n"));
    const seen: Observed = {
      ...(ip === undefined ? {} : { ip }),
      ...(req.headers["user-agent"] === undefined ? {} : { userAgent: req.headers["user-agent"] }),
    };
    try {
      if (route === "challenge")
        return reply
          .header("cache-control", "no-store")
          .type(JSON_TYPE)
          .send(encodeReply(requestId, people.challenge()));
      const minted: Minted =
        route === "register"
          ? await people.register(body as AuthRegisterArgs, seen)
          : route === "assert"
            ? await people.assert(body as AuthAssertArgs, seen)
            : await people.refreshToken(
                refreshCookie(req.headers.cookie),
                (body as AuthRefreshTokenArgs).reason,
                seen,
              );
      return reply
        .header("cache-control", "no-store")
        .header(
          "set-cookie",
          refreshCookieHeader(
            { ...deps, secure: people.secure },
            minted.sub,
            minted.refresh.value,
            REFRESH_TTL_MS / 1000,
          ),
        )
        .type(JSON_TYPE)
        .send(encodeReply(requestId, { sub: minted.sub, access: minted.access }));
    } catch (error) {
      if (!(error instanceof ContractError)) throw error;
      const { code, msg } = error.toBody();
      return fail(code === "invalid_args" ? 400 : 401, code, msg);
    }
  };
  for (const route of AUTH_ROUTES) app.post(`${deps.basePath}auth/${route}`, handle(route));
  const personOf = (req: FastifyRequest) => {
    const person = deps.personOf(req);
    const people = deps.people();
    return person !== undefined && people !== undefined ? { person, people } : undefined;
  };
  const notPerson = { ok: false, code: "forbidden", error: "only a person's access token may" };
  app.post("/api/auth/signout", async (req, reply) => {
    const who = personOf(req);
    if (who === undefined) return reply.code(403).send(notPerson);
    await who.people.signOut(who.person.familyId);
    return reply
      .header(
        "set-cookie",
        refreshCookieHeader({ ...deps, secure: who.people.secure }, who.person.sub, "", 0),
      )
      .send({ ok: true });
  });
  app.post("/api/auth/add-device", async (req, reply) => {
    const who = personOf(req);
    if (who === undefined) return reply.code(403).send(notPerson);
    const { url, code, expires_at } = who.people.addPasskey(undefined, who.person.sub);
    return reply.header("cache-control", "no-store").send({ ok: true, url, code, expires_at });
  });
}

/** Cookies named like the refresh token's: `[__Secure-]ccmsg-<16 hex>`. */
const REFRESH_COOKIE = /^(?:__Secure-)?ccmsg-[0-9a-f]{16}$/;

export function refreshCookie(header: string | undefined): string | undefined {
  for (const pair of (header ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && REFRESH_COOKIE.test(pair.slice(0, eq).trim())) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The refresh cookie (contract §9.5): per issuer and person, limited to the
 * auth routes, HttpOnly, SameSite=Strict (the console is this origin).
 * `__Secure-` and `Secure` need https; a plain-http endpoint (loopback
 * development) drops both (DR-0044). */
export function refreshCookieHeader(
  deps: Pick<AuthRoutesDeps, "instanceId" | "basePath"> & { secure: boolean },
  sub: string,
  value: string,
  maxAgeS: number,
): string {
  const hex = createHash("sha256").update(`${deps.instanceId}\n${sub}`).digest("hex").slice(0, 16);
  const name = `${deps.secure ? "__Secure-" : ""}ccmsg-${hex}`;
  return `${name}=${value}; Path=${deps.basePath}auth/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${deps.secure ? "; Secure" : ""}`;
}
