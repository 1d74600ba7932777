import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  editConflicts,
  globMatches,
  globsOverlap,
  type KeyedReservation,
  literalPrefix,
  liveReservations,
  parseDuration,
  parseReservation,
  reservationConflicts,
} from "../../src/contract/reservations.js";

// The reservation globs (DR-0041): a table of what a person would expect, and
// properties against a reference built from regular expressions.

/** The reference: a glob as a regular expression over normalised paths. */
function reference(glob: string): RegExp {
  const body = glob
    .split("/")
    .filter((s) => s !== "")
    .map((s) =>
      s === "**"
        ? "(?:/[^/]+)*"
        : `/${[...s].map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")}`,
    )
    .join("");
  return new RegExp(`^${body}$`, "u");
}

const normalised = (path: string) =>
  path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => `/${s}`)
    .join("");

describe("globMatches", () => {
  it.each([
    ["/repo/src/**", "/repo/src/a.ts", true],
    ["/repo/src/**", "/repo/src/deep/er/a.ts", true],
    ["/repo/src/**", "/repo/src", true],
    ["/repo/src/**", "/repo/srcx/a.ts", false],
    ["/repo/src/*.ts", "/repo/src/a.ts", true],
    ["/repo/src/*.ts", "/repo/src/.hidden.ts", true],
    ["/repo/src/*.ts", "/repo/src/sub/a.ts", false],
    ["/repo/src/?.ts", "/repo/src/a.ts", true],
    ["/repo/src/?.ts", "/repo/src/ab.ts", false],
    ["/repo/**/test/*.ts", "/repo/test/a.ts", true],
    ["/repo/**/test/*.ts", "/repo/x/y/test/a.ts", true],
    ["/repo/**/test/*.ts", "/repo/x/y/test/sub/a.ts", false],
    ["/repo/a**b", "/repo/aXb", true],
    ["/repo/a**b", "/repo/a/b", false],
    ["/repo/README.md", "/repo/README.md", true],
    ["/repo/README.md", "/repo/readme.md", false],
    ["/repo//src/a.ts", "/repo/src/a.ts", true],
    ["/repo/[a].ts", "/repo/[a].ts", true],
    ["/repo/[a].ts", "/repo/a.ts", false],
    ["/repo/é/*", "/repo/é/x", true],
  ])("%s matches %s: %s", (glob, path, expected) => {
    expect(globMatches(glob, path)).toBe(expected);
  });

  it("takes the path literally: a * in a file name is only itself", () => {
    expect(globMatches("/repo/a.ts", "/repo/*")).toBe(false);
    expect(globMatches("/repo/*", "/repo/*")).toBe(true);
  });

  it("agrees with the regular-expression reference on any glob and path", () => {
    const segment = fc.oneof(
      fc.constant("**"),
      fc
        .array(fc.constantFrom("a", "b", "*", "?", "."), { minLength: 1, maxLength: 4 })
        .map((cs) => cs.join("")),
    );
    const glob = fc.array(segment, { maxLength: 5 }).map((s) => `/${s.join("/")}`);
    const path = fc
      .array(
        fc
          .array(fc.constantFrom("a", "b", "."), { minLength: 1, maxLength: 4 })
          .map((c) => c.join("")),
        { maxLength: 6 },
      )
      .map((s) => `/${s.join("/")}`);
    fc.assert(
      fc.property(glob, path, (g, p) => {
        expect(globMatches(g, p)).toBe(reference(g).test(normalised(p)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("globsOverlap", () => {
  it.each([
    ["/r/src/**", "/r/src/a.ts", true],
    ["/r/src/**", "/r/**/*.ts", true],
    ["/r/src/*.ts", "/r/src/*.js", false],
    ["/r/src/a*", "/r/src/*b", true],
    ["/r/src/a?", "/r/src/?b", true],
    ["/r/src/a?", "/r/src/b?", false],
    ["/r/src/**", "/r/test/**", false],
    ["/r/**", "/**", true],
    ["/r/*/x", "/r/y/*", true],
    ["/r/*/x", "/r/y/z/*", false],
    ["/r/**/x", "/r/y/z/*", true],
    ["/r/a/b", "/r/a/b", true],
    ["/r/a/b", "/r/a/c", false],
  ])("%s and %s: %s", (a, b, expected) => {
    expect(globsOverlap(a, b)).toBe(expected);
    expect(globsOverlap(b, a)).toBe(expected);
  });

  // Every path of up to `depth` names of one or two letters from {a, b, c}.
  // A witness of two globs needs no more names than their segments other than
  // `**` together, nor longer names than their segments.
  const names = ["a", "b", "c"].flatMap((x) => [x, ...["a", "b", "c"].map((y) => x + y)]);
  function pathsUpTo(depth: number): string[] {
    let level = [""];
    const out = [""];
    for (let d = 0; d < depth; d++) {
      level = level.flatMap((p) => names.map((n) => `${p}/${n}`));
      out.push(...level);
    }
    return out;
  }
  const upTo3 = pathsUpTo(3);
  const upTo4 = pathsUpTo(4);
  const segment = fc
    .array(fc.constantFrom("a", "b", "*", "?"), { minLength: 1, maxLength: 2 })
    .map((cs) => cs.join(""));
  const small = (segments: number, doubleStar: boolean) =>
    fc
      .array(
        doubleStar ? fc.oneof(fc.constant("**"), segment) : segment.filter((x) => x !== "**"),
        { maxLength: segments },
      )
      .map((s) => `/${s.join("/")}`);
  const witnessed = (a: string, b: string, paths: string[]) => {
    const ra = reference(a);
    const rb = reference(b);
    return paths.some((path) => ra.test(path) && rb.test(path));
  };

  it("is true exactly when some path matches both (checked by enumeration)", () => {
    // Against a glob without `**`, a witness has at most its three names.
    fc.assert(
      fc.property(small(3, true), small(3, false), (a, b) => {
        expect(globsOverlap(a, b)).toBe(witnessed(a, b, upTo3));
      }),
      { numRuns: 400 },
    );
    // `**` on both sides: two segments each, so at most four names.
    fc.assert(
      fc.property(small(2, true), small(2, true), (a, b) => {
        expect(globsOverlap(a, b)).toBe(witnessed(a, b, upTo4));
      }),
      { numRuns: 60 },
    );
  });

  it("the counterexample a three-name search missed: a witness of four names", () => {
    expect(globsOverlap("/a/a/**", "/**/b/a")).toBe(true);
    expect(globMatches("/a/a/**", "/a/a/b/a") && globMatches("/**/b/a", "/a/a/b/a")).toBe(true);
  });

  it("is symmetric, and a glob overlaps every path it matches", () => {
    fc.assert(
      fc.property(small(3, true), small(3, true), (a, b) => {
        expect(globsOverlap(a, b)).toBe(globsOverlap(b, a));
        expect(globsOverlap(a, a)).toBe(true);
      }),
    );
  });
});

describe("literalPrefix", () => {
  it("is the part before the first wildcard", () => {
    expect(literalPrefix("/r/src/**/x")).toBe("/r/src");
    expect(literalPrefix("/r/src/a*.ts")).toBe("/r/src");
    expect(literalPrefix("/r/src/a.ts")).toBe("/r/src/a.ts");
    expect(literalPrefix("/**")).toBe("/");
  });
});

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["30m", 1_800_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1h30m", 5_400_000],
    [" 5m ", 300_000],
    ["30d", 30 * 86_400_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "30", "m", "0s", "-5m", "1.5h", "5 m", "5min", "31d", "1w"])(
    "%j is not a duration",
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

const A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb";

function entry(key: string, sid: string | null, glob: string, exclusive: boolean, expires: number) {
  return {
    key,
    value: { v: 1, glob, holder: { sid }, exclusive, created_at: 0, expires_at: expires },
  };
}

describe("reservations as KV entries", () => {
  it("reads only well-formed, unexpired values, soonest expiry first", () => {
    const live = liveReservations(
      [
        entry("a:1", A, "/r/src/**", true, 2000),
        entry("a:2", A, "/r/doc/**", true, 500),
        entry("a:3", A, "/r/old/**", true, 1000),
        { key: "junk", value: { glob: "/r/**" } },
        { key: "rel", value: { ...entry("x", A, "src/**", true, 9000).value } },
        { key: "gone" },
      ],
      1000,
    );
    expect(live.map((r) => r.key)).toEqual(["a:1"]);
    expect(parseReservation("text")).toBeUndefined();
  });

  it("finds conflicts with others only, and between shared ones none", () => {
    const live = liveReservations(
      [entry("a:1", A, "/r/src/**", true, 9000), entry("p:1", null, "/r/doc/**", false, 9000)],
      0,
    ) as KeyedReservation[];
    const keys = (l: KeyedReservation[]) => l.map((r) => r.key);
    expect(
      keys(reservationConflicts(live, { sid: B, glob: "/r/src/a.ts", exclusive: true })),
    ).toEqual(["a:1"]);
    expect(
      keys(reservationConflicts(live, { sid: B, glob: "/r/src/a.ts", exclusive: false })),
    ).toEqual(["a:1"]);
    expect(
      keys(reservationConflicts(live, { sid: A, glob: "/r/src/a.ts", exclusive: true })),
    ).toEqual([]);
    expect(
      keys(reservationConflicts(live, { sid: B, glob: "/r/doc/x", exclusive: false })),
    ).toEqual([]);
    expect(keys(reservationConflicts(live, { sid: B, glob: "/r/**", exclusive: true }))).toEqual([
      "a:1",
      "p:1",
    ]);
    // The person's own reservation is the person's.
    expect(
      keys(reservationConflicts(live, { sid: null, glob: "/r/doc/x", exclusive: true })),
    ).toEqual([]);
    expect(keys(editConflicts(live, B, "/r/src/a.ts"))).toEqual(["a:1"]);
    expect(keys(editConflicts(live, A, "/r/src/a.ts"))).toEqual([]);
    expect(keys(editConflicts(live, A, "/r/doc/a.md"))).toEqual(["p:1"]);
  });
});
