import type {
  AuthAssertArgs,
  AuthChallenge,
  AuthRegisterArgs,
  AuthResolveArgs,
  AuthResolveResult,
  AuthRotateArgs,
  AuthRotateResult,
  AuthToken,
  RegisterClaims,
} from "../../contract/auth.js";
import { AUTH_CHALLENGE_TTL_MS, FAMILY_TOMBSTONE_RETENTION_MS } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import type { AuthRecordsStore, CredentialRow } from "../../store/auth-records.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";
import type { Logger } from "../../util/logger.js";
import { sha256Hex } from "../../util/sha256.js";

/** How long a registration URL lives (contract §9.5). */
export const REGISTRATION_TTL_MS = 10 * 60_000;
/** Wrong codes one registration URL takes before it is spent. */
export const REGISTRATION_ATTEMPTS = 5;
/** An access token lives hours; a refresh token a month (DR-0044). */
export const ACCESS_TTL_MS = 2 * 3_600_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;

/** COSE algorithm ids: ES256, RS256, Ed25519 (EdDSA). */
const ALGORITHMS = [-7, -257, -8];

/** What the HTTP carrier observed about the client; it decides nothing. */
export interface Observed {
  ip?: string;
  userAgent?: string;
}

/** A login's outcome: the session for JSON and the refresh value for the cookie. */
export interface Minted {
  sub: string;
  access: AuthToken;
  refresh: AuthToken;
}

/** Who a valid access token speaks for. */
export interface PersonToken {
  sub: string;
  familyId: string;
  expiresAt: number;
  /** The web UI origin the family was minted for (the WebSocket's Origin rule). */
  webui: string;
}

/** A live WebSocket of a person: closed when their access is revoked. */
export interface PersonLink {
  sub: string;
  familyId: string;
  close(): void;
}

interface Registration {
  secret: Buffer;
  code: string;
  claims: RegisterClaims & { webui: string };
  attempts: number;
  spent: boolean;
}

export interface PersonAuthOptions {
  instanceId: string;
  /** The operator-facing name; subjects are `<unit>-<n>`. */
  unit: string;
  /** The public base URL (`http(s)://host[:port]/path/`): RP ID and Origin. */
  endpoint: string;
  store: AuthRecordsStore;
  /** Run a write on the group commit. */
  commit<T>(write: () => T): Promise<T>;
  now(): number;
  log: Logger;
  accessTtlMs?: number;
}

const random = (bytes: number) => nodeCrypto().randomBytes(bytes).toString("base64url");

/**
 * Person authentication (contract §9; DR-0044): registration URLs and
 * challenges held in memory by this instance as their issuer, passkeys and
 * token families in the store. There is no mesh yet, so this instance is the
 * issuer of everything it sees: `resolve` and `rotate` are the issuer's side
 * of `auth_resolve` and `auth_rotate`, one function each, for a mesh to
 * forward to later. Anything naming another issuer is `auth_unknown_issuer`.
 */
export class PersonAuth {
  private readonly registrations = new Map<string, Registration>();
  private readonly challenges = new Map<string, number>();
  /** The family's shared access token while it has over half its life left
   * (only its hash is stored, so a restart mints a new one). */
  private readonly currentAccess = new Map<string, AuthToken>();
  private readonly links = new Set<PersonLink>();
  readonly accessTtlMs: number;
  readonly webui: string;
  readonly rpId: string;
  readonly endpoint: string;
  /** An https endpoint: the refresh cookie is `__Secure-` and `Secure`. */
  readonly secure: boolean;

  constructor(private readonly o: PersonAuthOptions) {
    this.accessTtlMs = o.accessTtlMs ?? ACCESS_TTL_MS;
    const url = new URL(o.endpoint);
    this.webui = url.origin;
    this.rpId = url.hostname;
    this.endpoint = o.endpoint;
    this.secure = url.protocol === "https:";
  }

  now(): number {
    return this.o.now();
  }

  /** The console's sign-out: the family dies, its tokens with it. */
  signOut(familyId: string): Promise<void> {
    return this.kill(familyId, "signed out");
  }

  // --- administration (the Unix socket only) ---

  /** Mint a registration URL and its code (`ccmsg passkey add`). */
  addPasskey(
    label: string | undefined,
    sub?: string,
  ): {
    url: string;
    code: string;
    sub: string;
    expires_at: number;
  } {
    const now = this.o.now();
    this.sweep(now);
    const jti = random(16);
    const secret = nodeCrypto().randomBytes(32);
    const target = sub ?? this.nextSub();
    const claims: Registration["claims"] = {
      iss: this.o.instanceId,
      sub: target,
      unit: this.o.unit,
      endpoint: this.o.endpoint,
      rp_id: this.rpId,
      expires_at: now + REGISTRATION_TTL_MS,
      jti,
      user_id: this.o.store.userId(target) ?? random(16),
      webui: this.webui,
      ...(label === undefined ? {} : { issued_label: label }),
    };
    const code = String(nodeCrypto().randomInt(0, 1_000_000)).padStart(6, "0");
    this.registrations.set(jti, { secret, code, claims, attempts: 0, spent: false });
    const token = `${jti}.${sign(secret, claims)}`;
    return {
      url: `${this.o.endpoint}#register=${token}`,
      code,
      sub: target,
      expires_at: claims.expires_at,
    };
  }

  list(): CredentialRow[] {
    return this.o.store.credentials();
  }

  /** Remove a person: tombstone their passkeys, kill their families, close
   * their connections. The count of passkeys removed. */
  async remove(sub: string): Promise<number> {
    const now = this.o.now();
    const n = await this.o.commit(() =>
      this.o.store.removeSubject(sub, now, FAMILY_TOMBSTONE_RETENTION_MS),
    );
    for (const [id] of this.currentAccess)
      if (this.o.store.family(id)?.sub === sub) this.currentAccess.delete(id);
    for (const link of [...this.links]) if (link.sub === sub) link.close();
    this.o.log.info({ sub, removed: n }, "passkey removed");
    return n;
  }

  /** Whether registration is in use: a passkey, or a URL still open. Until
   * then a browser without the owner's cookie is told to run `ccmsg open`. */
  inUse(): boolean {
    const now = this.o.now();
    for (const r of this.registrations.values())
      if (!r.spent && r.claims.expires_at > now) return true;
    return this.o.store.credentials().length > 0;
  }

  // --- the HTTP-carried ops ---

  challenge(): AuthChallenge {
    const now = this.o.now();
    this.sweep(now);
    const challenge = random(32);
    const expires_at = now + AUTH_CHALLENGE_TTL_MS;
    this.challenges.set(challenge, expires_at);
    return { challenge, issuer: this.o.instanceId, expires_at };
  }

  /** The issuer's side of `auth_resolve`: judge a registration's code, or
   * spend a challenge. */
  resolve(args: AuthResolveArgs): AuthResolveResult {
    const now = this.o.now();
    if (args.kind === "challenge") {
      const expires = this.challenges.get(args.challenge);
      if (expires === undefined) throw contractError("auth_invalid", "unknown or spent challenge");
      this.challenges.delete(args.challenge);
      if (expires <= now) throw contractError("auth_expired", "the challenge has expired");
      return { kind: "challenge" };
    }
    const [jti = "", signature = ""] = args.token.split(".");
    const reg = this.registrations.get(jti);
    const vague = () => contractError("auth_invalid", "this registration URL or code is not valid");
    if (reg === undefined || !equal(signature, sign(reg.secret, reg.claims))) throw vague();
    if (reg.spent) throw vague();
    if (reg.claims.expires_at <= now)
      throw contractError("auth_expired", "this registration URL has expired");
    if (!equal(args.code, reg.code)) {
      if (++reg.attempts >= REGISTRATION_ATTEMPTS) reg.spent = true;
      throw vague();
    }
    reg.spent = true;
    const { webui: _w, ...claims } = reg.claims;
    return { kind: "register", claims };
  }

  async register(args: AuthRegisterArgs, seen: Observed): Promise<Minted> {
    // Without `challenge`, only one this instance holds can be honoured: the
    // one the browser signed, read from its clientDataJSON (contract §9.2).
    const expected = args.challenge?.challenge ?? signedChallenge(args.credential.client_data_json);
    const challenge = this.spendChallenge(args.challenge?.issuer ?? this.o.instanceId, expected);
    const claimsOf = (): RegisterClaims & { webui: string } => {
      const resolved = this.resolve({ kind: "register", token: args.token, code: args.code });
      if (resolved.kind !== "register") throw contractError("auth_invalid", "not a registration");
      return { ...resolved.claims, webui: new URL(resolved.claims.endpoint).origin };
    };
    // Judge the URL and code before the challenge is spent, so a wrong code
    // leaves the page able to try again with the same challenge.
    const claims = claimsOf();
    challenge();
    const { verifyRegistrationResponse } = await import("@simplewebauthn/server");
    const c = args.credential;
    refuseCrossOrigin(c.client_data_json);
    if (c.raw_id === "" || c.id !== c.raw_id)
      throw contractError("auth_invalid", "the credential id is empty or inconsistent");
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({
        response: {
          id: c.id,
          rawId: c.raw_id,
          type: "public-key",
          clientExtensionResults: {},
          response: { clientDataJSON: c.client_data_json, attestationObject: c.attestation_object },
        },
        expectedChallenge: expected ?? "",
        expectedOrigin: claims.webui,
        expectedRPID: claims.rp_id,
        requireUserPresence: true,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
    } catch (error) {
      throw contractError(
        "auth_invalid",
        `the passkey did not verify: ${(error as Error).message}`,
      );
    }
    if (!verified.verified) throw contractError("auth_invalid", "the passkey did not verify");
    const info = verified.registrationInfo;
    if (info.fmt !== "none") throw contractError("auth_invalid", "attestation format must be none");
    if (this.o.store.credential(info.credential.id) !== undefined)
      throw contractError("auth_invalid", "this passkey is already registered");
    const now = this.o.now();
    await this.o.commit(() => {
      this.o.store.addSubject(claims.sub, claims.user_id, now);
      this.o.store.addCredential({
        credential_id: info.credential.id,
        sub: claims.sub,
        public_key: Buffer.from(info.credential.publicKey).toString("base64url"),
        user_handle: claims.user_id,
        endpoint: claims.endpoint,
        webui: claims.webui,
        rp_id: claims.rp_id,
        sign_count: info.credential.counter,
        backup_eligible: info.credentialDeviceType === "multiDevice" ? 1 : 0,
        backup_state: info.credentialBackedUp ? 1 : 0,
        issued_label: claims.issued_label ?? null,
        device_label: args.device_label ?? null,
        registered_at: now,
        registered_ip: seen.ip ?? null,
        registered_user_agent: seen.userAgent?.slice(0, 512) ?? null,
      });
    });
    this.o.log.info({ sub: claims.sub }, "passkey registered");
    return this.mintFamily(claims.sub, claims.webui);
  }

  async assert(args: AuthAssertArgs, seen: Observed): Promise<Minted> {
    this.spendChallenge(args.challenge.issuer, args.challenge.challenge)();
    const c = args.credential;
    const record = c.raw_id === "" ? undefined : this.o.store.credential(c.raw_id);
    if (record === undefined || record.deleted_at !== null)
      throw contractError("auth_invalid", "unknown passkey");
    if (record.webui !== this.webui)
      throw contractError("auth_invalid", "this passkey belongs to another endpoint");
    refuseCrossOrigin(c.client_data_json);
    const { verifyAuthenticationResponse } = await import("@simplewebauthn/server");
    let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      result = await verifyAuthenticationResponse({
        response: {
          id: c.raw_id,
          rawId: c.raw_id,
          type: "public-key",
          clientExtensionResults: {},
          response: {
            clientDataJSON: c.client_data_json,
            authenticatorData: c.authenticator_data,
            signature: c.signature,
            ...(c.user_handle === undefined ? {} : { userHandle: c.user_handle }),
          },
        },
        expectedChallenge: args.challenge.challenge,
        expectedOrigin: record.webui,
        expectedRPID: record.rp_id,
        credential: {
          id: record.credential_id,
          publicKey: Buffer.from(record.public_key, "base64url"),
          counter: record.sign_count,
        },
        requireUserVerification: true,
      });
    } catch (error) {
      throw contractError(
        "auth_invalid",
        `the passkey did not verify: ${(error as Error).message}`,
      );
    }
    if (!result.verified) throw contractError("auth_invalid", "the passkey did not verify");
    const now = this.o.now();
    await this.o.commit(() =>
      this.o.store.used(
        record.credential_id,
        result.authenticationInfo.newCounter,
        now,
        seen.ip ?? null,
        seen.userAgent?.slice(0, 512) ?? null,
      ),
    );
    return this.mintFamily(record.sub, record.webui);
  }

  /** `auth_refresh_token`: the cookie's value, rotated at its family's issuer
   * (this instance: there is no mesh to forward to). */
  refreshToken(value: string | undefined, reason: AuthRotateArgs["reason"], seen: Observed) {
    if (value === undefined) throw contractError("auth_invalid", "no refresh token");
    return this.rotate({
      refresh_token: value,
      ...(reason === undefined ? {} : { reason }),
      ...(seen.ip === undefined ? {} : { ip: seen.ip.slice(0, 45) }),
      ...(seen.userAgent === undefined ? {} : { user_agent: seen.userAgent.slice(0, 512) }),
    });
  }

  /** The issuer's side of `auth_rotate`: spend a refresh value. The current
   * value rotates; the previous one gets one grace retry (a lost reply);
   * anything older is a replay and kills the whole family. */
  async rotate(args: AuthRotateArgs): Promise<AuthRotateResult> {
    const now = this.o.now();
    const hash = sha256Hex(args.refresh_token);
    const found = this.o.store.familyOfRefresh(hash);
    if (found === undefined) throw contractError("auth_invalid", "unknown refresh token");
    const { family, as } = found;
    if (family.iss !== this.o.instanceId)
      throw contractError("auth_unknown_issuer", "this token family was issued elsewhere");
    if (family.dead_at !== null || !this.o.store.subjectLive(family.sub))
      throw contractError("auth_invalid", "this token family is revoked");
    const replay =
      as === "retired" ||
      (as === "previous" &&
        (family.previous_grace_used !== 0 || (family.previous_expires_at ?? 0) <= now));
    if (replay) {
      await this.kill(family.id, "a spent refresh token was presented again");
      throw contractError("auth_invalid", "this refresh token was already used");
    }
    if (as === "current" && family.refresh_expires_at <= now)
      throw contractError("auth_expired", "the refresh token has expired: sign in again");
    const refresh = { value: random(32), expires_at: now + REFRESH_TTL_MS };
    const current = { hash: family.refresh_hash, expiresAt: family.refresh_expires_at };
    const lastRefresh = JSON.stringify({
      at: now,
      ...(args.reason === undefined ? {} : { reason: args.reason }),
      ...(args.ip === undefined ? {} : { ip: args.ip }),
      ...(args.user_agent === undefined ? {} : { user_agent: args.user_agent }),
    });
    const access = this.accessFor(family.id, now);
    await this.o.commit(() => {
      this.o.store.rotate({
        familyId: family.id,
        refreshHash: sha256Hex(refresh.value),
        refreshExpiresAt: refresh.expires_at,
        ...(as === "current" ? { previous: current } : {}),
        retire:
          as === "current"
            ? family.previous_hash === null
              ? []
              : [{ hash: family.previous_hash, expiresAt: family.previous_expires_at ?? now }]
            : [current],
        graceUsed: as === "previous",
        lastRefresh,
      });
      if (access.fresh)
        this.o.store.addAccess(sha256Hex(access.token.value), family.id, access.token.expires_at);
    });
    return { sub: family.sub, access: access.token, refresh };
  }

  // --- tokens on the other surfaces ---

  /** Who an access token speaks for: a PersonToken, or why not. */
  person(value: string): PersonToken | "invalid" | "expired" {
    const row = this.o.store.access(sha256Hex(value));
    if (row === undefined) return "invalid";
    const family = this.o.store.family(row.family_id);
    if (family === undefined || family.dead_at !== null || !this.o.store.subjectLive(family.sub))
      return "invalid";
    if (row.expires_at <= this.o.now()) return "expired";
    return { sub: family.sub, familyId: family.id, expiresAt: row.expires_at, webui: family.webui };
  }

  /** Hold a person's WebSocket so revoking them closes it. */
  track(link: PersonLink): () => void {
    this.links.add(link);
    return () => this.links.delete(link);
  }

  /** The web UI origins a browser may come from (CORS, Origin checks). */
  origins(): Set<string> {
    return new Set([this.webui, ...this.o.store.webuiOrigins()]);
  }

  /** Drop what has expired (challenges, URLs, stored token hashes). */
  sweep(now: number): void {
    for (const [c, exp] of this.challenges) if (exp <= now) this.challenges.delete(c);
    // An expired URL is remembered for another lifetime, so it is answered
    // `auth_expired` rather than `auth_invalid` (contract §3).
    for (const [jti, r] of this.registrations)
      if (r.claims.expires_at + REGISTRATION_TTL_MS <= now) this.registrations.delete(jti);
  }

  async prune(): Promise<void> {
    const now = this.o.now();
    await this.o.commit(() => this.o.store.prune(now));
  }

  // --- inside ---

  private nextSub(): string {
    const taken = new Set(this.o.store.subjectsOf(this.o.unit));
    for (const r of this.registrations.values()) taken.add(r.claims.sub);
    let n = 1;
    while (taken.has(`${this.o.unit}-${n}`)) n++;
    return `${this.o.unit}-${n}`;
  }

  /** Check a challenge is ours and still good; the returned call spends it. */
  private spendChallenge(issuer: string | undefined, challenge: string | undefined): () => void {
    if (challenge === undefined) throw contractError("auth_invalid", "a challenge is required");
    if (issuer !== this.o.instanceId)
      throw contractError(
        "auth_unknown_issuer",
        "the challenge was issued by an instance unknown here: request a fresh one",
      );
    const expires = this.challenges.get(challenge);
    if (expires === undefined) throw contractError("auth_invalid", "unknown or spent challenge");
    if (expires <= this.o.now()) {
      this.challenges.delete(challenge);
      throw contractError("auth_expired", "the challenge has expired: request a fresh one");
    }
    return () => {
      this.resolve({ kind: "challenge", challenge });
    };
  }

  private accessFor(familyId: string, now: number): { token: AuthToken; fresh: boolean } {
    const held = this.currentAccess.get(familyId);
    if (held !== undefined && held.expires_at - now > this.accessTtlMs / 2)
      return { token: held, fresh: false };
    const token = { value: random(32), expires_at: now + this.accessTtlMs };
    this.currentAccess.set(familyId, token);
    return { token, fresh: true };
  }

  private async mintFamily(sub: string, webui: string): Promise<Minted> {
    const now = this.o.now();
    const id = random(16);
    const refresh = { value: random(32), expires_at: now + REFRESH_TTL_MS };
    const access = this.accessFor(id, now).token;
    await this.o.commit(() => {
      this.o.store.addFamily({
        id,
        sub,
        iss: this.o.instanceId,
        webui,
        refresh_hash: sha256Hex(refresh.value),
        refresh_expires_at: refresh.expires_at,
        created_at: now,
      });
      this.o.store.addAccess(sha256Hex(access.value), id, access.expires_at);
    });
    return { sub, access, refresh };
  }

  private async kill(familyId: string, why: string): Promise<void> {
    const now = this.o.now();
    await this.o.commit(() => this.o.store.kill(familyId, now, FAMILY_TOMBSTONE_RETENTION_MS));
    this.currentAccess.delete(familyId);
    for (const link of [...this.links]) if (link.familyId === familyId) link.close();
    this.o.log.warn({ family: familyId }, `token family revoked: ${why}`);
  }
}

function sign(secret: Buffer, claims: RegisterClaims): string {
  const text = [claims.iss, claims.sub, claims.jti, claims.endpoint, claims.expires_at].join("\n");
  return nodeCrypto().createHmac("sha256", secret).update(text).digest("base64url");
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && nodeCrypto().timingSafeEqual(x, y);
}

/** The challenge a browser signed, as its clientDataJSON names it. */
function signedChallenge(clientDataJson: string): string | undefined {
  try {
    const data = JSON.parse(Buffer.from(clientDataJson, "base64url").toString("utf8"));
    return typeof data?.challenge === "string" ? data.challenge : undefined;
  } catch {
    return undefined;
  }
}

/** `crossOrigin` true or a `topOrigin` means the ceremony ran in a frame of
 * another site: refused (contract §9.5). */
function refuseCrossOrigin(clientDataJson: string): void {
  let data: { crossOrigin?: unknown; topOrigin?: unknown };
  try {
    data = JSON.parse(Buffer.from(clientDataJson, "base64url").toString("utf8"));
  } catch {
    throw contractError("auth_invalid", "clientDataJSON is not JSON");
  }
  if (data.crossOrigin === true || data.topOrigin !== undefined)
    throw contractError("auth_invalid", "the ceremony ran in a cross-origin frame");
}
