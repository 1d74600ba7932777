import { describe, expect, it } from "vitest";
import { hostAndOriginRule } from "../../src/instance/http/host-origin.js";
import { typeByExtension, typeBySniff } from "../../src/instance/sandbox/content-type.js";
import {
  GRANT_LIFETIME_MS,
  MAX_GRANTS,
  SandboxGrants,
  tokenMatches,
} from "../../src/instance/sandbox/grants.js";
import { parseRange } from "../../src/instance/sandbox/serve.js";

// The sandbox's pieces (DR-0042) without an instance: grants, ranges, types,
// and the console's Host rule refusing sandbox names.

const SID = "0f0e0d0c-0b0a-4908-8706-050403020100";

function grants(start = 1_000_000) {
  let t = start;
  const g = new SandboxGrants(() => t);
  g.serveOn(7077);
  return { g, advance: (ms: number) => (t += ms) };
}

describe("grants", () => {
  it("renews the same scope and keeps apart different ones", () => {
    const { g, advance } = grants();
    const a = g.mint(SID, "contained", "docs/a.html");
    advance(1000);
    const again = g.mint(SID, "contained", "docs/a.html");
    expect(again.gid).toBe(a.gid);
    expect(again.token).toBe(a.token);
    expect(again.expiresAt).toBe(1_000_000 + 1000 + GRANT_LIFETIME_MS);
    expect(g.mint(SID, "contained", "docs/b.html").gid).not.toBe(a.gid);
    expect(g.mint(SID, "workspace", "/w/docs/a.html").gid).not.toBe(a.gid);
  });

  it("spells a URL on the grant's own origin, the name encoded, the token first", () => {
    const { g } = grants();
    const a = g.mint(SID, "contained", "my docs/read me.html");
    expect(a.gid).toMatch(/^[a-z2-7]{20}$/);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.dir).toBe("my docs");
    expect(g.url(a)).toBe(`http://${a.gid}.sandbox.localhost:7077/${a.token}/read%20me.html`);
    expect(g.mint(SID, "contained", "top.html").dir).toBe("");
    expect(g.mint(SID, "external", "/notes/todo.md").dir).toBe("/notes");
  });

  it("finds a live grant by its exact Host only", () => {
    const { g, advance } = grants();
    const a = g.mint(SID, "contained", "a.html");
    expect(g.forHost(`${a.gid}.sandbox.localhost:7077`)).toBe(a);
    expect(g.forHost(`${a.gid.toUpperCase()}.SANDBOX.LOCALHOST:7077`)).toBe(a);
    expect(g.forHost(`${a.gid}.sandbox.localhost:7078`)).toBeUndefined();
    expect(g.forHost(`${a.gid}.sandbox.localhost`)).toBeUndefined();
    expect(g.forHost(`x.${a.gid}.sandbox.localhost:7077`)).toBeUndefined();
    expect(g.forHost(`${a.gid}.localhost:7077`)).toBeUndefined();
    expect(g.forHost(undefined)).toBeUndefined();
    advance(GRANT_LIFETIME_MS);
    expect(g.forHost(`${a.gid}.sandbox.localhost:7077`)).toBeUndefined();
    // Expired is gone: minting again makes a new grant.
    expect(g.mint(SID, "contained", "a.html").gid).not.toBe(a.gid);
  });

  it("serves nothing before the listener is up", () => {
    const g = new SandboxGrants(() => 0);
    expect(g.serving).toBe(false);
    const a = g.mint(SID, "contained", "a.html");
    expect(g.forHost(`${a.gid}.sandbox.localhost:7077`)).toBeUndefined();
  });

  it("revokes known and unknown gids alike", () => {
    const { g } = grants();
    const a = g.mint(SID, "contained", "a.html");
    g.revoke("nope");
    g.revoke(a.gid);
    g.revoke(a.gid);
    expect(g.live(a.gid)).toBeUndefined();
  });

  it("holds at most MAX_GRANTS, dropping the one closest to expiry", () => {
    const { g, advance } = grants();
    const first = g.mint(SID, "contained", "f-0");
    advance(1);
    const second = g.mint(SID, "contained", "f-1");
    for (let i = 2; i < MAX_GRANTS; i++) g.mint(SID, "contained", `f-${i}`);
    expect(g.live(first.gid)).toBe(first);
    // Renewed, the first is no longer the soonest to expire.
    advance(1);
    g.mint(SID, "contained", "f-0");
    const extra = g.mint(SID, "contained", "one-more");
    expect(g.live(extra.gid)).toBe(extra);
    expect(g.live(first.gid)).toBe(first);
    expect(g.live(second.gid)).toBeUndefined();
  });

  it("compares tokens whole", () => {
    const { g } = grants();
    const a = g.mint(SID, "contained", "a.html");
    expect(tokenMatches(a, a.token)).toBe(true);
    expect(tokenMatches(a, a.token.slice(1))).toBe(false);
    expect(tokenMatches(a, `${a.token}x`)).toBe(false);
    expect(tokenMatches(a, "")).toBe(false);
  });
});

describe("ranges", () => {
  it("answers one simple range and the whole file otherwise", () => {
    expect(parseRange(undefined, 100)).toBeUndefined();
    expect(parseRange("bytes=0-9", 100)).toEqual([0, 9]);
    expect(parseRange("bytes=90-", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-10", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-500", 100)).toEqual([0, 99]);
    expect(parseRange("bytes=50-500", 100)).toEqual([50, 99]);
    expect(parseRange("bytes=0-1,5-6", 100)).toBeUndefined();
    expect(parseRange("items=0-1", 100)).toBeUndefined();
    expect(parseRange("bytes=9-2", 100)).toBeUndefined();
    expect(parseRange("bytes=-", 100)).toBeUndefined();
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-", 0)).toBe("unsatisfiable");
  });
});

describe("content types", () => {
  it("comes from the extension, else from a look at the head", () => {
    expect(typeByExtension("a/B.HTML")).toBe("text/html; charset=utf-8");
    expect(typeByExtension("x.png")).toBe("image/png");
    expect(typeByExtension("Makefile")).toBeUndefined();
    expect(typeByExtension("x.unknownext")).toBeUndefined();
    expect(typeBySniff(true)).toBe("text/plain; charset=utf-8");
    expect(typeBySniff(false)).toBe("application/octet-stream");
  });
});

describe("the console's Host rule", () => {
  it("refuses sandbox names as Host and Origin, even bound to a wildcard address", () => {
    for (const bound of ["0.0.0.0", "127.0.0.1"]) {
      const rule = hostAndOriginRule(bound, 7077);
      expect(rule("abc.sandbox.localhost:7077", undefined), bound).toBeDefined();
      expect(rule("ABC.Sandbox.Localhost:7077", undefined), bound).toBeDefined();
      expect(rule("127.0.0.1:7077", "http://abc.sandbox.localhost:7077"), bound).toBeDefined();
      expect(rule("127.0.0.1:7077", "http://127.0.0.1:7077"), bound).toBeUndefined();
      expect(rule("localhost:7077", undefined), bound).toBeUndefined();
    }
  });
});
