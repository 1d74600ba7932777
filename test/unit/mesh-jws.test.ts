import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MESH_VER,
  oneOffKey,
  type ProofClaims,
  randomToken,
  signProof,
  verifyProof,
} from "../../src/instance/mesh/jws.js";

const ISS = "http://127.0.0.1:1001/";
const AUD = "https://box.example.ts.net/ccmsg/";

async function setup() {
  const key = await oneOffKey();
  const challenge = randomToken(32);
  const now = Date.now();
  const claims: ProofClaims = {
    ver: MESH_VER,
    iss: ISS,
    aud: AUD,
    challenge,
    exp: Math.floor(now / 1000) + 10,
  };
  const expected = { kid: key.kid, jwk: key.jwk, iss: ISS, aud: AUD, challenge, now };
  return { key, claims, expected };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

describe("the mesh proof (compact JWS, EdDSA)", () => {
  it("a one-off key has a kid of at least 128 bits and a public JWK without its private half", async () => {
    const { kid, jwk } = await oneOffKey();
    expect(Buffer.from(kid, "base64url").length).toBeGreaterThanOrEqual(16);
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", kid, alg: "EdDSA" });
    expect(jwk).not.toHaveProperty("d");
    expect((await oneOffKey()).kid).not.toBe(kid);
  });

  it("verifies a proof signed with the key, and returns its claims", async () => {
    const { key, claims, expected } = await setup();
    const jws = signProof(key, claims);
    expect(jws.split(".")).toHaveLength(3);
    expect(verifyProof(jws, expected)).toEqual({ ok: true, claims });
  });

  const refusals: [
    string,
    (s: Awaited<ReturnType<typeof setup>>) => { jws: unknown; expected?: object },
    string,
  ][] = [
    [
      "alg none",
      (s) => ({ jws: `${b64({ alg: "none", kid: s.key.kid })}.${b64(s.claims)}.` }),
      "not allowed",
    ],
    [
      "alg ES256",
      (s) => ({ jws: `${b64({ alg: "ES256", kid: s.key.kid })}.${b64(s.claims)}.AAAA` }),
      "not allowed",
    ],
    [
      "a header without alg",
      (s) => ({ jws: `${b64({ kid: s.key.kid })}.${b64(s.claims)}.AAAA` }),
      "not allowed",
    ],
    [
      "an embedded jwk",
      (s) => {
        const input = `${b64({ alg: "EdDSA", kid: s.key.kid, jwk: s.key.jwk })}.${b64(s.claims)}`;
        return {
          jws: `${input}.${sign(null, Buffer.from(input), s.key.privateKey).toString("base64url")}`,
        };
      },
      "may not carry jwk",
    ],
    ["another kid", (s) => ({ jws: signProof({ ...s.key, kid: randomToken() }, s.claims) }), "kid"],
    [
      "another key's signature",
      (s) => ({
        jws: signProof(
          { kid: s.key.kid, privateKey: generateKeyPairSync("ed25519").privateKey },
          s.claims,
        ),
      }),
      "signature",
    ],
    [
      "a tampered payload",
      (s) => {
        const [h, , sig] = signProof(s.key, s.claims).split(".");
        return { jws: `${h}.${b64({ ...s.claims, aud: ISS })}.${sig}` };
      },
      "signature",
    ],
    [
      "an expired exp",
      (s) => ({
        jws: signProof(s.key, { ...s.claims, exp: Math.floor(s.expected.now / 1000) - 1 }),
      }),
      "expired",
    ],
    [
      "an exp far ahead",
      (s) => ({
        jws: signProof(s.key, { ...s.claims, exp: Math.floor(s.expected.now / 1000) + 3600 }),
      }),
      "too far",
    ],
    [
      "another challenge",
      (s) => ({ jws: signProof(s.key, { ...s.claims, challenge: randomToken(32) }) }),
      "another challenge",
    ],
    [
      "another aud",
      (s) => ({ jws: signProof(s.key, { ...s.claims, aud: "https://box.example.ts.net/" }) }),
      "aud",
    ],
    [
      "another iss",
      (s) => ({ jws: signProof(s.key, { ...s.claims, iss: "http://127.0.0.1:1002/" }) }),
      "iss",
    ],
    ["another ver", (s) => ({ jws: signProof(s.key, { ...s.claims, ver: 2 }) }), "ver 2"],
    [
      "a key of another kind",
      (s) => ({
        jws: signProof(s.key, s.claims),
        expected: { ...s.expected, jwk: { kty: "EC", crv: "P-256", x: "AA", y: "AA" } },
      }),
      "not an Ed25519 JWK",
    ],
    [
      "a key carrying a private half",
      (s) => ({
        jws: signProof(s.key, s.claims),
        expected: { ...s.expected, jwk: { ...s.key.jwk, d: "AAAA" } },
      }),
      "not an Ed25519 JWK",
    ],
    ["two parts", () => ({ jws: "abc.def" }), "compact JWS"],
    ["non-base64url parts", () => ({ jws: "a+b.c/d.e=f" }), "compact JWS"],
    ["a header that is not JSON", (s) => ({ jws: `bm90IGpzb24.${b64(s.claims)}.AAAA` }), "header"],
    ["a number", () => ({ jws: 7 }), "compact JWS"],
  ];
  for (const [name, make, why] of refusals)
    it(`refuses ${name}`, async () => {
      const s = await setup();
      const { jws, expected } = make(s);
      const verdict = verifyProof(jws, (expected ?? s.expected) as typeof s.expected);
      expect(verdict.ok).toBe(false);
      expect(verdict.ok ? "" : verdict.why).toContain(why);
    });
});
