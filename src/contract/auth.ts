import { type Static, Type } from "@sinclair/typebox";
import { request, response, topicFrame } from "./envelope.js";
import { Base64Url, Endpoint, InstanceId, NonEmpty, Subject, Timestamp } from "./identifiers.js";
import { Text } from "./text.js";
import { topicNamePattern } from "./topics.js";

// Person authentication with passkeys (contract §9): the seven ops and the
// replicated records. The contract pins shapes and authorization only; the
// WebAuthn ceremony, cookies and replication are the instance's business.
//
// Four ops are carried over HTTP (the browser has no connection yet), one runs
// on the person's open WebSocket, and two travel between instances because
// only an issuer may judge what it issued.

/** The 6-digit code shown apart from the registration URL: both halves are
 * needed, so a leaked URL alone registers nothing. */
export const REGISTER_CODE_PATTERN = "^[0-9]{6}$";
export const RegisterCode = Type.String({
  pattern: REGISTER_CODE_PATTERN,
  description: "a registration code is 6 digits",
});
export type RegisterCode = Static<typeof RegisterCode>;

/** SHA-256 in lowercase hex: how a retired refresh value is remembered without
 * keeping the value itself. */
export const SHA256_HEX_PATTERN = "^[0-9a-f]{64}$";

/** A free-text label a person or administrator typed. */
const Label = Text({ maxLength: 128 });
/** A client address as recovered through trusted proxies; 45 fits the longest
 * IPv6 spelling. Shown so a person can recognise it; it decides nothing. */
const ClientIp = Text({ minLength: 1, maxLength: 45 });
/** A User-Agent as observed; bounded so a record stays small. */
const UserAgent = Text({ maxLength: 512 });

export const REFRESH_REASONS = ["reload", "expiring", "reconnect"] as const;
/** Why a client refreshes: a hint for the record, checked by nothing. */
export const RefreshReason = Type.Union(REFRESH_REASONS.map((r) => Type.Literal(r)));
export type RefreshReason = (typeof REFRESH_REASONS)[number];

/** A token and its deadline. Tokens are opaque random values looked up in the
 * records, so nothing can be read out of one. */
export const AuthToken = Type.Object({ value: Base64Url, expires_at: Timestamp });
export type AuthToken = Static<typeof AuthToken>;

/** A single-use challenge. It names its issuer because behind a load balancer
 * the answer may reach another instance, which must ask the issuer to spend it. */
export const AuthChallenge = Type.Object({
  /** At least 16 random bytes. Not length-checked here: an unknown challenge
   * fails as `auth_invalid` whatever its length. */
  challenge: Base64Url,
  issuer: InstanceId,
  /** `AUTH_CHALLENGE_TTL_MS` after minting. */
  expires_at: Timestamp,
});
export type AuthChallenge = Static<typeof AuthChallenge>;

/** What a successful login hands the browser. The refresh token is not here:
 * the HTTP carrier sets it as an HttpOnly cookie, out of reach of scripts. */
export const AuthSession = Type.Object({
  sub: Subject,
  access: AuthToken,
});
export type AuthSession = Static<typeof AuthSession>;

// --- auth_challenge (HTTP) ---

export const AuthChallengeArgs = Type.Object({});
export type AuthChallengeArgs = Static<typeof AuthChallengeArgs>;
export const AuthChallengeResult = AuthChallenge;
export type AuthChallengeResult = Static<typeof AuthChallengeResult>;
export const AuthChallengeRequest = request("auth_challenge", AuthChallengeArgs);
export const AuthChallengeResponse = response("auth_challenge", AuthChallengeResult);

// --- auth_register (HTTP) ---

/** The output of `navigator.credentials.create()`, Base64Url throughout.
 * Attestation format `none`: the authenticator's make is not judged. */
export const RegistrationCredential = Type.Object({
  id: Base64Url,
  raw_id: Base64Url,
  client_data_json: Base64Url,
  attestation_object: Base64Url,
});
export type RegistrationCredential = Static<typeof RegistrationCredential>;

export const AuthRegisterArgs = Type.Object({
  /** The registration URL's opaque token; only its issuer can read it. */
  token: NonEmpty,
  code: RegisterCode,
  device_label: Type.Optional(Label),
  /** Without it, only a challenge held by the receiving instance itself can be
   * honoured: there would be no issuer to ask. */
  challenge: Type.Optional(AuthChallenge),
  credential: RegistrationCredential,
});
export type AuthRegisterArgs = Static<typeof AuthRegisterArgs>;
export const AuthRegisterResult = AuthSession;
export type AuthRegisterResult = Static<typeof AuthRegisterResult>;
export const AuthRegisterRequest = request("auth_register", AuthRegisterArgs);
export const AuthRegisterResponse = response("auth_register", AuthRegisterResult);

// --- auth_assert (HTTP) ---

/** The output of `navigator.credentials.get()`, Base64Url throughout. */
export const AssertionCredential = Type.Object({
  raw_id: Base64Url,
  client_data_json: Base64Url,
  authenticator_data: Base64Url,
  signature: Base64Url,
  user_handle: Type.Optional(Base64Url),
});
export type AssertionCredential = Static<typeof AssertionCredential>;

export const AuthAssertArgs = Type.Object({
  credential: AssertionCredential,
  /** Required here, unlike in `auth_register`: a login may land on any
   * instance, which must know whom to ask to spend the challenge. */
  challenge: AuthChallenge,
});
export type AuthAssertArgs = Static<typeof AuthAssertArgs>;
export const AuthAssertResult = AuthSession;
export type AuthAssertResult = Static<typeof AuthAssertResult>;
export const AuthAssertRequest = request("auth_assert", AuthAssertArgs);
export const AuthAssertResponse = response("auth_assert", AuthAssertResult);

// --- auth_refresh_token (HTTP) ---

/** The refresh token comes from the cookie, never from the arguments, so a
 * script that can build this request still cannot supply one. */
export const AuthRefreshTokenArgs = Type.Object({
  reason: Type.Optional(RefreshReason),
});
export type AuthRefreshTokenArgs = Static<typeof AuthRefreshTokenArgs>;
export const AuthRefreshTokenResult = AuthSession;
export type AuthRefreshTokenResult = Static<typeof AuthRefreshTokenResult>;
export const AuthRefreshTokenRequest = request("auth_refresh_token", AuthRefreshTokenArgs);
export const AuthRefreshTokenResponse = response("auth_refresh_token", AuthRefreshTokenResult);

// --- auth_refresh (WebSocket) ---

/** Moves the open connection's deadline to that of a newer access token, so a
 * refresh does not cost a reconnect. */
export const AuthRefreshArgs = Type.Object({ access_token: Base64Url });
export type AuthRefreshArgs = Static<typeof AuthRefreshArgs>;
export const AuthRefreshResult = Type.Object({
  /** The new deadline, as `hello` reported the first. */
  auth_expires_at: Timestamp,
});
export type AuthRefreshResult = Static<typeof AuthRefreshResult>;
export const AuthRefreshRequest = request("auth_refresh", AuthRefreshArgs);
export const AuthRefreshResponse = response("auth_refresh", AuthRefreshResult);

// --- auth_resolve (mesh; `to_instance` = the issuer) ---

/** What a registration token stands for. Only the issuer can read the token,
 * so the receiving instance learns these through `auth_resolve`. */
export const RegisterClaims = Type.Object({
  /** The issuer, which holds the token's secret in memory only. */
  iss: InstanceId,
  sub: Subject,
  /** The instance's operator-facing name. */
  unit: NonEmpty,
  /** What the credential is for; registration is posted to
   * `<endpoint>auth/register`. */
  endpoint: Endpoint,
  /** WebAuthn RP ID: the endpoint's host or a registrable suffix of it. */
  rp_id: NonEmpty,
  expires_at: Timestamp,
  /** Spent once, so a URL registers one credential. */
  jti: NonEmpty,
  /** 16 random bytes fixed per `sub`: the WebAuthn `user.id`, later stored as
   * the record's `user_handle`. */
  user_id: Base64Url,
  /** The administrator's note. */
  issued_label: Type.Optional(Label),
});
export type RegisterClaims = Static<typeof RegisterClaims>;

/** Judge a registration's token and code. Only the issuer counts attempts, so
 * a guesser gains nothing by spreading guesses over instances. */
export const AuthResolveRegisterArgs = Type.Object({
  kind: Type.Literal("register"),
  token: NonEmpty,
  code: RegisterCode,
});
export type AuthResolveRegisterArgs = Static<typeof AuthResolveRegisterArgs>;
/** Spend a challenge the issuer minted. */
export const AuthResolveChallengeArgs = Type.Object({
  kind: Type.Literal("challenge"),
  challenge: Base64Url,
});
export type AuthResolveChallengeArgs = Static<typeof AuthResolveChallengeArgs>;
export const AuthResolveArgs = Type.Union([AuthResolveRegisterArgs, AuthResolveChallengeArgs]);
export type AuthResolveArgs = Static<typeof AuthResolveArgs>;

export const AuthResolveRegisterResult = Type.Object({
  kind: Type.Literal("register"),
  claims: RegisterClaims,
});
export type AuthResolveRegisterResult = Static<typeof AuthResolveRegisterResult>;
/** The challenge is spent; nothing else to say. */
export const AuthResolveChallengeResult = Type.Object({ kind: Type.Literal("challenge") });
export type AuthResolveChallengeResult = Static<typeof AuthResolveChallengeResult>;
export const AuthResolveResult = Type.Union([
  AuthResolveRegisterResult,
  AuthResolveChallengeResult,
]);
export type AuthResolveResult = Static<typeof AuthResolveResult>;
export const AuthResolveRequest = request("auth_resolve", AuthResolveArgs);
export const AuthResolveResponse = response("auth_resolve", AuthResolveResult);

// --- auth_rotate (mesh; `to_instance` = the family's `iss`) ---

/** A family has one writer, its issuer; any other instance forwards the
 * rotation there rather than write the family itself. */
export const AuthRotateArgs = Type.Object({
  refresh_token: Base64Url,
  reason: Type.Optional(RefreshReason),
  /** As observed by the receiving instance, which alone saw the client. */
  ip: Type.Optional(ClientIp),
  user_agent: Type.Optional(UserAgent),
});
export type AuthRotateArgs = Static<typeof AuthRotateArgs>;
export const AuthRotateResult = Type.Object({
  sub: Subject,
  access: AuthToken,
  /** Returned between instances only; the receiving instance turns it into
   * the cookie. */
  refresh: AuthToken,
});
export type AuthRotateResult = Static<typeof AuthRotateResult>;
export const AuthRotateRequest = request("auth_rotate", AuthRotateArgs);
export const AuthRotateResponse = response("auth_rotate", AuthRotateResult);

// --- replicated records (`auth_records`) ---

/** A registered passkey. Complete once written, so a person can log in at any
 * instance while the registering one is down. */
export const CredentialRecord = Type.Object({
  kind: Type.Literal("credential"),
  sub: Subject,
  credential_id: Base64Url,
  /** COSE key. */
  public_key: Base64Url,
  user_handle: Base64Url,
  /** An assertion is accepted only where the origin matches and the request
   * path lies under this base URL: two base URLs on one host need two
   * registrations. */
  endpoint: Endpoint,
  /** Checked against the assertion's rpIdHash. */
  rp_id: Type.Optional(NonEmpty),
  /** Only two non-zero readings mean anything; a decrease is refused, since it
   * suggests a cloned authenticator. */
  sign_count: Type.Optional(Type.Integer({ minimum: 0 })),
  /** WebAuthn BE / BS flags: hints only. */
  backup_eligible: Type.Optional(Type.Boolean()),
  backup_state: Type.Optional(Type.Boolean()),
  issued_label: Type.Optional(Label),
  device_label: Type.Optional(Label),
  registered_at: Timestamp,
  registered_ip: Type.Optional(ClientIp),
  registered_user_agent: Type.Optional(UserAgent),
  last_used_at: Type.Optional(Timestamp),
  last_used_ip: Type.Optional(ClientIp),
  last_used_user_agent: Type.Optional(UserAgent),
});
export type CredentialRecord = Static<typeof CredentialRecord>;

/** The latest refresh, kept for a person to recognise. */
export const LastRefresh = Type.Object({
  at: Timestamp,
  reason: Type.Optional(RefreshReason),
  ip: Type.Optional(ClientIp),
  user_agent: Type.Optional(UserAgent),
});
export type LastRefresh = Static<typeof LastRefresh>;

/** A refresh value that has been rotated away. */
export const RetiredRefresh = Type.Object({
  /** SHA-256 of the value: enough to recognise a replay, useless to an
   * attacker who reads the record. */
  hash: Type.String({
    pattern: SHA256_HEX_PATTERN,
    description: "a SHA-256 hash is 64 lower-case hex digits",
  }),
  /** Kept until the value's own expiry; after it the value fails anyway. */
  expires_at: Timestamp,
});
export type RetiredRefresh = Static<typeof RetiredRefresh>;

/** One login's tokens: the access token every tab shares, and the refresh
 * token rotated on every use. */
export const TokenFamily = Type.Object({
  kind: Type.Literal("token_family"),
  sub: Subject,
  /** The only writer of the family; rotations are forwarded to it, so two
   * instances can never rotate one family apart. */
  iss: InstanceId,
  access: AuthToken,
  refresh: AuthToken,
  /** Latest only. */
  last_refresh: Type.Optional(LastRefresh),
  /** One grace retry for a client whose rotation reply was lost. Anything
   * older is a replay and kills the whole family. */
  previous_refresh: Type.Optional(AuthToken),
  retired: Type.Optional(Type.Array(RetiredRefresh)),
});
export type TokenFamily = Static<typeof TokenFamily>;

/** A deleted credential or family. It refuses every later write to its key:
 * with last-writer-wins replication, a plain deletion would be undone by the
 * first peer still holding the old record. */
export const AuthTombstone = Type.Object({
  kind: Type.Literal("tombstone"),
  sub: Subject,
  deleted_at: Timestamp,
  /** Absent on a credential tombstone, which is kept forever: a removed
   * passkey must never come back. A family tombstone lasts
   * `FAMILY_TOMBSTONE_RETENTION_MS`. */
  expires_at: Type.Optional(Timestamp),
});
export type AuthTombstone = Static<typeof AuthTombstone>;

/** One replicated record. Keys by convention: `credential/<sub>/<credential_id>`
 * and `family/<family id>`. These live here and not in the KV store, where a
 * person could read tokens or write credentials. */
export const AuthRecord = Type.Object({
  /** Cluster-wide id. */
  key: Text({ minLength: 1, maxLength: 256 }),
  /** Last writer wins on this. */
  updated_at: Timestamp,
  body: Type.Union([CredentialRecord, TokenFamily, AuthTombstone]),
});
export type AuthRecord = Static<typeof AuthRecord>;

/** `auth_records` (element; id = `key`; instances only). A deletion travels as
 * a tombstone element, never as a removal marker. */
export const AuthRecordsData = Type.Object({ records: Type.Array(AuthRecord) });
export type AuthRecordsData = Static<typeof AuthRecordsData>;
export const AuthRecordsFrame = topicFrame(topicNamePattern("auth_records"), AuthRecordsData);
export type AuthRecordsFrame = Static<typeof AuthRecordsFrame>;
