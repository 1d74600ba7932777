import { describe, expect, it } from "vitest";
import { OP_NAMES } from "../../src/contract/index.js";
import { isNonNegativeInteger, walkProperties, wireSchemas } from "./walk.js";

// Conventions of contract §1.11, checked by walking every schema on the wire.
// Each test collects every offender and expects none, so one failure names
// them all at once.

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
// Name segments that say "this is an amount of time", which must then name
// its unit.
const DURATION_WORDS = new Set([
  "duration",
  "timeout",
  "ttl",
  "delay",
  "interval",
  "elapsed",
  "age",
]);

const properties = wireSchemas().flatMap(([name, schema]) => walkProperties(name, schema));

describe("wire conventions", () => {
  it("walks a meaningful number of properties", () => {
    // Guards the walker itself: a broken walk would make every rule pass.
    expect(properties.length).toBeGreaterThan(500);
  });

  it("every field outside upstream-marked types and ECC shapes is snake_case", () => {
    const offenders = properties
      .filter((p) => !p.underUpstream && !p.underEcc && !SNAKE.test(p.name))
      .map((p) => p.path);
    expect(offenders).toEqual([]);
  });

  it("every field under upstream-marked types is still snake_case (names are converted)", () => {
    const offenders = properties
      .filter((p) => p.underUpstream && !SNAKE.test(p.name))
      .map((p) => p.path);
    expect(offenders).toEqual([]);
  });

  it("every *_at field is an integer Unix-ms timestamp", () => {
    const offenders = properties
      .filter((p) => p.name.endsWith("_at") && !isNonNegativeInteger(p.schema))
      .map((p) => p.path);
    expect(offenders).toEqual([]);
  });

  it("every duration names its unit (*_ms or *_secs) and is an integer", () => {
    const offenders = properties
      .filter((p) => {
        const segments = p.name.split("_");
        const unit = segments.at(-1);
        const hasUnit = unit === "ms" || unit === "secs";
        if (hasUnit) return p.schema.type !== "integer";
        return segments.some((s) => DURATION_WORDS.has(s));
      })
      .map((p) => p.path);
    expect(offenders).toEqual([]);
  });

  it("op names have the form <noun>_<verb>, hello being the only exception", () => {
    const offenders = OP_NAMES.filter((op) => op !== "hello" && !/^[a-z]+(_[a-z]+)+$/.test(op));
    expect(offenders).toEqual([]);
  });
});
