import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideMainSeries, MAIN_ORIGIN, type SeriesRequest } from "../../src/contract/llm-main.js";

// The `LlmRequestInfo.main` rule (contract §5.4) as properties over random
// sets of series: the instance decides `main` with this one function.

const SIDS = ["s1", "s2", "s3", "s4"];
const PREFIXES = ["p1", "p2", "p3", "p4", "p5"];

/** A set of series (one request per (sid, prefix)), distinct times. */
const seriesSet = (withOrigins: boolean) =>
  fc
    .uniqueArray(
      fc.record({
        sid: fc.constantFrom(...SIDS),
        prefix: fc.constantFrom(...PREFIXES),
        origin: withOrigins
          ? fc.option(fc.constantFrom(MAIN_ORIGIN, "subagent", "compact"), { nil: undefined })
          : fc.constant(undefined),
      }),
      { selector: (r) => `${r.sid}/${r.prefix}`, minLength: 1, maxLength: 14 },
    )
    .chain((rows) =>
      fc
        .uniqueArray(fc.integer({ min: 1, max: 1_000_000 }), {
          minLength: rows.length * 2,
          maxLength: rows.length * 2,
        })
        .map((times) => ({
          requests: rows.map(
            (r, i): SeriesRequest => ({
              sid: r.sid,
              prefix: r.prefix,
              ...(r.origin === undefined ? {} : { origin: r.origin }),
              received_at: times[i]!,
            }),
          ),
          firstUsed: new Map(rows.map((r, i) => [`${r.sid}/${r.prefix}`, times[rows.length + i]!])),
        })),
    );

const sharedPrefixes = (requests: SeriesRequest[]) => {
  const sids = new Map<string, Set<string>>();
  for (const r of requests) sids.set(r.prefix!, (sids.get(r.prefix!) ?? new Set()).add(r.sid));
  return new Set([...sids].filter(([, s]) => s.size >= 2).map(([p]) => p));
};

describe("decideMainSeries (property)", () => {
  it("without origins, every session has exactly one main series", () => {
    fc.assert(
      fc.property(seriesSet(false), ({ requests }) => {
        const verdict = decideMainSeries(requests);
        for (const sid of new Set(requests.map((r) => r.sid)))
          expect(requests.filter((r, i) => r.sid === sid && verdict[i]).length).toBe(1);
      }),
    );
  });

  it("the main series is the first-used unshared one, or the newest when all are shared", () => {
    fc.assert(
      fc.property(seriesSet(false), ({ requests, firstUsed }) => {
        const used = (r: SeriesRequest) => firstUsed.get(`${r.sid}/${r.prefix}`)!;
        const verdict = decideMainSeries(requests, (sid, prefix) =>
          firstUsed.get(`${sid}/${prefix}`),
        );
        const shared = sharedPrefixes(requests);
        for (const sid of new Set(requests.map((r) => r.sid))) {
          const own = requests.filter((r) => r.sid === sid);
          const unshared = own.filter((r) => !shared.has(r.prefix!));
          const expected =
            unshared.length > 0
              ? unshared.reduce((a, b) => (used(b) < used(a) ? b : a))
              : own.reduce((a, b) => (b.received_at > a.received_at ? b : a));
          const marked = requests.find((r, i) => r.sid === sid && verdict[i]);
          expect(marked).toBe(expected);
        }
      }),
    );
  });

  it("a stated origin decides its own row, whatever the others are", () => {
    fc.assert(
      fc.property(seriesSet(true), ({ requests }) => {
        const verdict = decideMainSeries(requests);
        requests.forEach((r, i) => {
          if (r.origin !== undefined) expect(verdict[i]).toBe(r.origin === MAIN_ORIGIN);
        });
      }),
    );
  });

  it("a verdict follows its request, not its position in the input", () => {
    fc.assert(
      fc.property(
        seriesSet(true).chain((set) =>
          fc.tuple(
            fc.constant(set),
            fc.shuffledSubarray(set.requests, {
              minLength: set.requests.length,
              maxLength: set.requests.length,
            }),
          ),
        ),
        ([{ requests }, shuffled]) => {
          const a = decideMainSeries(requests);
          const b = decideMainSeries(shuffled);
          shuffled.forEach((r, j) => {
            expect(b[j]).toBe(a[requests.indexOf(r)]);
          });
        },
      ),
    );
  });
});
