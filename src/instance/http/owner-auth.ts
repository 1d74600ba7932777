import type { IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import {
  COOKIE_LIFETIME_MS,
  type InstanceRun,
  OwnerCredential,
} from "../../state/owner-credential.js";
import type { PersonToken } from "../auth/person-auth.js";

/**
 * Who may use the TCP side (every HTTP route, the WebSocket upgrade): the
 * instance's owner, proven by the secret in the state directory — as
 * `Authorization: Bearer <secret>`, as the WebSocket subprotocol
 * `ccmsg.token.<secret>` (contract §1.1, for clients that cannot set
 * headers), or as the cookie a browser got from a one-time link of
 * `ccmsg open`. The Unix socket needs none of this: its file mode is the proof.
 *
 * Person authentication (passkeys, contract §9) slots in here: its access
 * token arrives in the same subprotocol and becomes another kind of Principal.
 */
export type Principal =
  | { kind: "owner"; via: "bearer" | "subprotocol" | "cookie" }
  | { kind: "person"; person: PersonToken; token: string };

/** A refusal or a redirect, for an HTTP reply or a raw upgrade socket. */
export interface AuthAnswer {
  status: number;
  headers: Record<string, string>;
  body?: { ok: false; code?: string; error: string } | { ok: true; version: string } | string;
}

export const SUBPROTOCOL_PREFIX = "ccmsg.token.";
/** The one-time link's route, matched on the end of the path like `/ws`. */
export const SIGN_IN_PATH = "/owner/login";

export interface OwnerAuthOptions {
  secret: string;
  run: InstanceRun;
  /** The instance clock (tests move it to expire a link). */
  now(): number;
}

export class OwnerAuth {
  private readonly credential: OwnerCredential;
  /** Per instance: cookies do not tell ports apart, and two instances on one
   * host must not overwrite each other's. */
  readonly cookieName: string;

  constructor(private readonly options: OwnerAuthOptions) {
    this.credential = new OwnerCredential(options.secret, options.run);
    this.cookieName = `ccmsg-owner-${options.run.instance.slice(0, 12)}`;
  }

  /** The owner, if the request carries a valid proof. */
  authenticate(headers: IncomingHttpHeaders): Principal | undefined {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
    if (bearer !== undefined && this.credential.isSecret(bearer))
      return { kind: "owner", via: "bearer" };
    if (this.subprotocol(offeredProtocols(headers)) !== undefined)
      return { kind: "owner", via: "subprotocol" };
    const cookie = cookieValue(headers.cookie, this.cookieName);
    if (cookie !== undefined && this.credential.isCookie(cookie, this.options.now()))
      return { kind: "owner", via: "cookie" };
    return undefined;
  }

  /** The offered `ccmsg.token.<secret>` subprotocol to echo, if one is valid. */
  subprotocol(offered: Iterable<string>): string | undefined {
    for (const p of offered) {
      if (
        p.startsWith(SUBPROTOCOL_PREFIX) &&
        this.credential.isSecret(p.slice(SUBPROTOCOL_PREFIX.length))
      )
        return p;
    }
    return undefined;
  }

  /**
   * `GET <prefix>owner/login?token=…`: spend the one-time token, set the
   * cookie, and send the browser on to the console at the prefix. The last
   * step is a page of this origin rather than a 303: the link is opened from
   * outside (a terminal, a file), and a browser withholds SameSite=Strict
   * cookies from a redirect chain that a foreign site started.
   */
  signIn(path: string, token: string | undefined): AuthAnswer {
    const check =
      token === undefined ? "invalid" : this.credential.spendOpenToken(token, this.options.now());
    if (check === "expired")
      return refusal(
        401,
        "auth_expired",
        "this sign-in link has expired: run `ccmsg open` for a new one",
      );
    if (check === "invalid")
      return refusal(
        401,
        "auth_invalid",
        "this sign-in link is not valid (or was used already): run `ccmsg open` for a new one",
      );
    // The prefix comes from the request line: anything beyond plain path
    // characters (a `;` would add cookie attributes) falls back to the root.
    const asked = path.slice(0, path.length - SIGN_IN_PATH.length + 1);
    const prefix = /^\/[\w.~%/-]*$/.test(asked) ? asked : "/";
    const value = this.credential.mintCookie(this.options.now());
    return {
      status: 200,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "set-cookie": `${this.cookieName}=${value}; Path=${prefix}; Max-Age=${COOKIE_LIFETIME_MS / 1000}; HttpOnly; SameSite=Strict`,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "content-security-policy": "default-src 'none'",
      },
      body: `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${prefix}"><title>ccmsg</title><p>Signed in. <a href="${prefix}">Open the console</a></p>\n`,
    };
  }
}

/** The refusal of a request that carries no valid proof. */
export const UNAUTHENTICATED: AuthAnswer = refusal(
  401,
  "auth_invalid",
  "this instance answers its owner only: send `Authorization: Bearer <secret>` (the secret is <state dir>/owner.secret), or open the console with `ccmsg open`",
);

/** A person's access token that has run out: the console refreshes it. */
export const ACCESS_EXPIRED: AuthAnswer = refusal(
  401,
  "auth_expired",
  "this access token has expired: refresh it (auth/refresh) or sign in again",
);

/** Beyond loopback the owner's credential does not count (DR-0044). */
export const PEOPLE_ONLY: AuthAnswer = refusal(
  401,
  "auth_invalid",
  "from beyond this machine, sign in with a passkey",
);

/** The same refusal for a browser opening the console's page: a page that
 * says how to sign in (nothing else is on it; no script, no style). */
export const UNAUTHENTICATED_PAGE: AuthAnswer = {
  status: 401,
  headers: {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'",
    "x-content-type-options": "nosniff",
  },
  body: `<!doctype html><meta charset="utf-8"><title>ccmsg: sign in</title><h1>This console answers its owner only</h1><p>Run <code>ccmsg open</code> on the machine that runs this instance: it opens (or prints, with <code>--print</code>) a one-time link that signs this browser in.</p>\n`,
};

export function refusal(status: number, code: string, error: string): AuthAnswer {
  return {
    status,
    headers: { "www-authenticate": 'Bearer realm="ccmsg"', "cache-control": "no-store" },
    body: { ok: false, code, error },
  };
}

/** Answer an upgrade request before the WebSocket is accepted. */
const STATUS_TEXT: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  429: "Too Many Requests",
};

export function refuseUpgrade(socket: Socket, answer: AuthAnswer): void {
  const body = JSON.stringify(answer.body ?? {});
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_TEXT[answer.status] ?? "Forbidden"}`,
    "Connection: close",
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(answer.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const raw = headers["sec-websocket-protocol"];
  return raw === undefined ? [] : raw.split(",").map((p) => p.trim());
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}
