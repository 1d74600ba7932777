import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256, sha256Hex } from "../../src/util/sha256.js";

const nodeSha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("sha256Hex", () => {
  it("is the standard's digest (FIPS 180-4's examples)", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("equals node:crypto's for every length across the block edges, and for paths with any characters", () => {
    for (let n = 0; n <= 200; n++) expect(sha256Hex("x".repeat(n))).toBe(nodeSha("x".repeat(n)));
    for (const s of [
      "/root/.claude",
      "/tmp/ccmsg-0/état dir/ü",
      "🦀/ẞ\u0000tab\t",
      "a".repeat(100_000),
    ])
      expect(sha256Hex(s)).toBe(nodeSha(s));
    expect(Buffer.from(sha256("glob/**")).toString("base64url")).toBe(
      createHash("sha256").update("glob/**").digest("base64url"),
    );
  });
});
