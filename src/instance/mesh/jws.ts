import type { KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { nodeCrypto } from "../../util/lazy-builtins.js";

// The mesh handshake's one-off key and proof (contract §8.1; DR-0047): an
// Ed25519 key made per dial, its public half as a JWK, and a compact JWS
// (`alg: "EdDSA"`) over the claims the receiver checks. Node's crypto only.

const generateKeyPair = (type: "ed25519") => promisify(nodeCrypto().generateKeyPair)(type);

/** The handshake format this build speaks (`MeshHello.ver`, the proof's `ver`). */
export const MESH_VER = 1;
/** How far ahead a proof's `exp` lies (seconds, JWT NumericDate). */
export const PROOF_TTL_SECS = 10;
/** The only algorithm accepted: a JWS naming anything else (`none`
 * included) is refused before its signature is looked at. */
const ALLOWED_ALGS = new Set(["EdDSA"]);
/** Header members that would let the sender choose the key: the key comes
 * from the key route (C2) and nowhere else. */
const KEY_BEARING_HEADERS = ["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "crit"];

const B64URL = /^[A-Za-z0-9_-]*$/;

/** The public half of a one-off key, as the key route answers it. */
export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
}

export interface ProofClaims {
  ver: number;
  iss: string;
  aud: string;
  challenge: string;
  /** Seconds since the epoch. */
  exp: number;
}

export interface OneOffKey {
  kid: string;
  privateKey: KeyObject;
  jwk: PublicJwk;
}

/** 128 bits or more of randomness, base64url (kids and challenges). */
export function randomToken(bytes = 16): string {
  return nodeCrypto().randomBytes(bytes).toString("base64url");
}

/** A fresh Ed25519 key and its kid (generated off the event loop). */
export async function oneOffKey(): Promise<OneOffKey> {
  const { publicKey, privateKey } = await generateKeyPair("ed25519");
  const kid = randomToken(16);
  const { x } = publicKey.export({ format: "jwk" }) as { x: string };
  return { kid, privateKey, jwk: { kty: "OKP", crv: "Ed25519", x, kid, alg: "EdDSA" } };
}

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The compact JWS proof `header.payload.signature`. */
export function signProof(key: Pick<OneOffKey, "kid" | "privateKey">, claims: ProofClaims): string {
  const input = `${b64json({ alg: "EdDSA", kid: key.kid, typ: "JWT" })}.${b64json(claims)}`;
  const signature = nodeCrypto()
    .sign(null, Buffer.from(input), key.privateKey)
    .toString("base64url");
  return `${input}.${signature}`;
}

export type ProofVerdict = { ok: true; claims: ProofClaims } | { ok: false; why: string };

export interface Expected {
  kid: string;
  /** The key as fetched from the key route. */
  jwk: unknown;
  iss: string;
  aud: string;
  challenge: string;
  /** Milliseconds since the epoch. */
  now: number;
}

/**
 * Check a proof in the order §8.1 step 6 gives: the algorithm against the
 * allowlist, the kid, the signature with the fetched key, then the claims
 * (ver, iss, aud, the challenge sent, exp). Never throws.
 */
export function verifyProof(jws: unknown, expected: Expected): ProofVerdict {
  const no = (why: string): ProofVerdict => ({ ok: false, why });
  if (typeof jws !== "string" || jws.length > 4096) return no("the proof is not a compact JWS");
  const parts = jws.split(".");
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p)))
    return no("the proof is not a compact JWS");
  const [h, p, s] = parts as [string, string, string];
  const header = parseJson(h);
  if (header === undefined) return no("the proof's header is not a JSON object");
  if (typeof header.alg !== "string" || !ALLOWED_ALGS.has(header.alg))
    return no(`algorithm ${JSON.stringify(header.alg)} is not allowed (EdDSA only)`);
  for (const k of KEY_BEARING_HEADERS)
    if (Object.hasOwn(header, k)) return no(`the proof's header may not carry ${k}`);
  if (header.kid !== expected.kid) return no("the proof's kid is not the greeting's");
  const publicKey = importJwk(expected.jwk, expected.kid);
  if (publicKey === undefined) return no("the fetched key is not an Ed25519 JWK for this kid");
  let good = false;
  try {
    good = nodeCrypto().verify(
      null,
      Buffer.from(`${h}.${p}`),
      publicKey,
      Buffer.from(s, "base64url"),
    );
  } catch {}
  if (!good) return no("the proof's signature does not verify");
  const claims = parseJson(p);
  if (claims === undefined) return no("the proof's payload is not a JSON object");
  if (claims.ver !== MESH_VER) return no(`proof ver ${String(claims.ver)} is not spoken here`);
  if (claims.iss !== expected.iss) return no("the proof's iss is not the greeting's");
  if (claims.aud !== expected.aud) return no("the proof's aud is not this instance's endpoint");
  if (claims.challenge !== expected.challenge) return no("the proof answers another challenge");
  const exp = claims.exp;
  if (typeof exp !== "number" || !Number.isFinite(exp)) return no("the proof has no exp");
  if (exp * 1000 <= expected.now) return no("the proof has expired");
  // A proof meant to live far longer than one handshake was not made by us.
  if (exp * 1000 > expected.now + 6 * PROOF_TTL_SECS * 1000)
    return no("the proof's exp is too far ahead");
  return { ok: true, claims: claims as unknown as ProofClaims };
}

function parseJson(b64: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(b64, "base64url").toString("utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** An Ed25519 public key from a JWK that names exactly that and this kid. */
function importJwk(jwk: unknown, kid: string): KeyObject | undefined {
  const j = jwk as Record<string, unknown> | null;
  if (typeof j !== "object" || j === null) return undefined;
  if (j.kty !== "OKP" || j.crv !== "Ed25519" || typeof j.x !== "string") return undefined;
  if (j.kid !== undefined && j.kid !== kid) return undefined;
  if (j.alg !== undefined && j.alg !== "EdDSA") return undefined;
  if (j.d !== undefined) return undefined;
  try {
    return nodeCrypto().createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: j.x },
      format: "jwk",
    });
  } catch {
    return undefined;
  }
}
