import { posix } from "node:path";
import type { FileKind } from "../../contract/files.js";
import { SANDBOX_DOMAIN } from "../../net/address.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";

// Sandbox grants (contract §4.3.5, DR-0042): who may fetch which file through
// the sandbox origin `http://<gid>.sandbox.localhost:<port>/<token>/<name>`.
// Held in memory only: a restart revokes every grant, which is the safe way
// round for a capability URL.

/** How long a grant lives after it was last minted. */
export const GRANT_LIFETIME_MS = 60 * 60 * 1000;
/** Live grants held at most; past it the one closest to expiry goes first. */
export const MAX_GRANTS = 1024;

/** A gid is a lowercase DNS label (hostnames are case-insensitive). */
const GID = /^[a-z2-7]{20}$/;
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

export interface Grant {
  gid: string;
  /** The secret: the first path segment of every URL through the grant. */
  token: string;
  sid: string;
  kind: FileKind;
  /** The granted file as its surface spells it (relative for `contained`). */
  path: string;
  /** The directory the grant reaches (the file's own, and below it), spelled
   * like `path`; `""` is the root of a `contained` surface. */
  dir: string;
  expiresAt: number;
}

function newGid(): string {
  const bytes = nodeCrypto().randomBytes(20);
  let out = "";
  for (const b of bytes) out += BASE32[b & 31];
  return out;
}

export class SandboxGrants {
  /** By gid; Map order is insertion order, not expiry. */
  private readonly byGid = new Map<string, Grant>();
  /** scope key → gid: minting the same scope again renews that grant. */
  private readonly byScope = new Map<string, string>();
  private port: number | undefined;

  constructor(private readonly now: () => number) {}

  /** The HTTP listener's port, once it is up: until then there is no origin
   * to serve grants on. */
  serveOn(port: number): void {
    this.port = port;
  }

  get serving(): boolean {
    return this.port !== undefined;
  }

  /** The grant for this scope (`path` already canonical for its kind): the
   * existing one with a later expiry, or a new one. */
  mint(sid: string, kind: FileKind, path: string): Grant {
    this.sweep();
    const key = `${sid}\0${kind}\0${path}`;
    const expiresAt = this.now() + GRANT_LIFETIME_MS;
    const known = this.byScope.get(key);
    const existing = known === undefined ? undefined : this.byGid.get(known);
    if (existing !== undefined) {
      existing.expiresAt = expiresAt;
      return existing;
    }
    if (this.byGid.size >= MAX_GRANTS) this.dropSoonest();
    const dir = posix.dirname(path);
    const grant: Grant = {
      gid: newGid(),
      token: nodeCrypto().randomBytes(32).toString("base64url"),
      sid,
      kind,
      path,
      dir: kind === "contained" && dir === "." ? "" : dir,
      expiresAt,
    };
    this.byGid.set(grant.gid, grant);
    this.byScope.set(key, grant.gid);
    return grant;
  }

  /** Forget a grant; unknown or expired gids alike (no existence oracle). */
  revoke(gid: string): void {
    const g = this.byGid.get(gid);
    if (g === undefined) return;
    this.byGid.delete(gid);
    this.byScope.delete(`${g.sid}\0${g.kind}\0${g.path}`);
  }

  /** A live grant by gid, or undefined (unknown, revoked or expired). */
  live(gid: string): Grant | undefined {
    if (!GID.test(gid)) return undefined;
    const g = this.byGid.get(gid);
    if (g === undefined) return undefined;
    if (g.expiresAt <= this.now()) {
      this.revoke(gid);
      return undefined;
    }
    return g;
  }

  /** The live grant a sandbox `Host` names (`<gid>.sandbox.localhost:<port>`,
   * nothing else), or undefined. */
  forHost(host: string | undefined): Grant | undefined {
    if (host === undefined || this.port === undefined) return undefined;
    const suffix = `.${SANDBOX_DOMAIN}:${this.port}`;
    const h = host.toLowerCase();
    return h.endsWith(suffix) ? this.live(h.slice(0, -suffix.length)) : undefined;
  }

  /** The grant's origin (no trailing slash). */
  origin(g: Grant): string {
    return `http://${g.gid}.${SANDBOX_DOMAIN}:${this.port}`;
  }

  /** The URL that opens the granted file itself. */
  url(g: Grant): string {
    return `${this.origin(g)}/${g.token}/${encodeURIComponent(posix.basename(g.path))}`;
  }

  private sweep(): void {
    const now = this.now();
    for (const g of [...this.byGid.values()]) if (g.expiresAt <= now) this.revoke(g.gid);
  }

  private dropSoonest(): void {
    let soonest: Grant | undefined;
    for (const g of this.byGid.values())
      if (soonest === undefined || g.expiresAt < soonest.expiresAt) soonest = g;
    if (soonest !== undefined) this.revoke(soonest.gid);
  }
}

/** Whether `offered` is the grant's token, compared in constant time. */
export function tokenMatches(g: Grant, offered: string): boolean {
  const a = Buffer.from(g.token);
  const b = Buffer.from(offered);
  return a.length === b.length && nodeCrypto().timingSafeEqual(a, b);
}
