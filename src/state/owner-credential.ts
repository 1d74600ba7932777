import { chmodSync, readFileSync } from "node:fs";
import { nodeCrypto } from "../util/lazy-builtins.js";
import { writeFileAtomic } from "./atomic-write.js";

/**
 * The owner credential: a secret in the state directory (mode 0600, in a 0700
 * directory) that a TCP client presents to prove it acts for the account that
 * runs the instance. Reading the file is the proof, as access to the socket
 * file is on the Unix socket. The instance and the CLI share this module: the
 * CLI mints one-time sign-in links from the secret, the instance checks them
 * and issues cookies derived from it.
 *
 * Formats (all base64url, never parsed by anyone else):
 * - secret: 32 random bytes;
 * - one-time link token `<expires base36>.<nonce>.<mac>`, bound to one run of
 *   one instance (its id and start time), so a restart voids links of the last
 *   run and the spent list can live in memory;
 * - cookie `<issued base36>.<nonce>.<mac>`, bound to the instance id, valid for
 *   COOKIE_LIFETIME_MS or until the secret changes.
 */

/** How long a link printed by `ccmsg open` may wait to be opened. */
export const OPEN_TOKEN_LIFETIME_MS = 120_000;
/** How long a browser stays signed in before `ccmsg open` is needed again. */
export const COOKIE_LIFETIME_MS = 30 * 24 * 3600_000;

const SECRET_BYTES = 32;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The instance's side: the secret, minted once with crypto randomness. A file
 * that does not hold one (truncated, edited) is replaced — that only signs
 * every browser out. The mode is tightened on every start. */
export function loadOrMintOwnerSecret(path: string): string {
  try {
    const text = readFileSync(path, "utf8").trim();
    if (SECRET_PATTERN.test(text)) {
      chmodSync(path, 0o600);
      return text;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secret = nodeCrypto().randomBytes(SECRET_BYTES).toString("base64url");
  writeFileAtomic(path, `${secret}\n`, 0o600);
  return secret;
}

/** A client's side: the secret as the instance wrote it, or undefined. */
export function readOwnerSecret(path: string): string | undefined {
  try {
    const text = readFileSync(path, "utf8").trim();
    return SECRET_PATTERN.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Which run of which instance a one-time token is for. */
export interface InstanceRun {
  instance: string;
  startedAt: number;
}

function mac(secret: string, ...parts: string[]): string {
  return nodeCrypto().createHmac("sha256", secret).update(parts.join("\n")).digest("base64url");
}

/** Constant-time comparison of two strings of any length: both are hashed
 * to one length first, so neither the content nor the length leaks. */
export function sameSecret(given: string, expected: string): boolean {
  const a = nodeCrypto().createHmac("sha256", "ccmsg-compare").update(given).digest();
  const b = nodeCrypto().createHmac("sha256", "ccmsg-compare").update(expected).digest();
  return nodeCrypto().timingSafeEqual(a, b);
}

/** Mint a one-time sign-in token (the CLI's `ccmsg open`). */
export function mintOpenToken(secret: string, run: InstanceRun, now: number): string {
  const expires = (now + OPEN_TOKEN_LIFETIME_MS).toString(36);
  const nonce = nodeCrypto().randomBytes(12).toString("base64url");
  return `${expires}.${nonce}.${mac(secret, "open", run.instance, String(run.startedAt), expires, nonce)}`;
}

/** The one-time link to the console of the instance listening at `address`
 * (`host:port`; a wildcard bind is reached on loopback): `ccmsg open` prints
 * it, and so does `daemon run` when a person started it (`npm start`). */
export function signInUrl(secret: string, run: InstanceRun, address: string, now: number): string {
  const host = address.replace(/^0\.0\.0\.0:/, "127.0.0.1:").replace(/^\[::\]:/, "[::1]:");
  return `http://${host}/owner/login?token=${mintOpenToken(secret, run, now)}`;
}

export type TokenCheck = "ok" | "expired" | "invalid";

/**
 * The instance's checker. One-time tokens are spent in memory: a token is
 * bound to this run, so forgetting them at a restart lets nothing be replayed.
 * Only tokens with a valid mac are remembered, so the list holds what the
 * owner minted and nothing a stranger sends.
 */
export class OwnerCredential {
  private readonly spent = new Map<string, number>();

  constructor(
    private readonly secret: string,
    private readonly run: InstanceRun,
  ) {}

  /** `Authorization: Bearer <secret>` and the `ccmsg.token.<secret>` subprotocol. */
  isSecret(value: string): boolean {
    return sameSecret(value, this.secret);
  }

  /** Check a one-time token and spend it. */
  spendOpenToken(token: string, now: number): TokenCheck {
    const [expires, nonce, given, extra] = token.split(".");
    if (expires === undefined || nonce === undefined || given === undefined || extra !== undefined)
      return "invalid";
    const { instance, startedAt } = this.run;
    const expected = mac(this.secret, "open", instance, String(startedAt), expires, nonce);
    if (!sameSecret(given, expected)) return "invalid";
    for (const [n, until] of this.spent) if (until < now) this.spent.delete(n);
    if (this.spent.has(nonce)) return "invalid";
    const until = Number.parseInt(expires, 36);
    if (!(until >= now)) return "expired";
    this.spent.set(nonce, until);
    return "ok";
  }

  /** A cookie value for a browser that signed in now. */
  mintCookie(now: number): string {
    const issued = now.toString(36);
    const nonce = nodeCrypto().randomBytes(12).toString("base64url");
    return `${issued}.${nonce}.${mac(this.secret, "cookie", this.run.instance, issued, nonce)}`;
  }

  isCookie(value: string, now: number): boolean {
    const [issued, nonce, given, extra] = value.split(".");
    if (issued === undefined || nonce === undefined || given === undefined || extra !== undefined)
      return false;
    const expected = mac(this.secret, "cookie", this.run.instance, issued, nonce);
    if (!sameSecret(given, expected)) return false;
    const at = Number.parseInt(issued, 36);
    return at <= now + 60_000 && now - at < COOKIE_LIFETIME_MS;
  }
}
