import { describe, expect, it } from "vitest";
import { isLoopbackHost } from "../../src/net/address.js";

describe("isLoopbackHost", () => {
  it("accepts the loopback spellings", () => {
    for (const host of ["127.0.0.1", "::1", "[::1]", "localhost"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it("refuses everything else", () => {
    for (const host of [
      "",
      "0.0.0.0",
      "::",
      "127.0.0.2",
      "192.168.1.10",
      "example.com",
      "LOCALHOST.",
      "localhost.example.com",
      "127.0.0.1:7077",
      " 127.0.0.1",
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
