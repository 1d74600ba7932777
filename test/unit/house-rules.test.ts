import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/instance.js";

// Rules of the house (ARCHITECTURE.md), as tests that walk the source and list
// every offender, so one failure names them all.

const SRC = join(ROOT, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "fixtures" ? [] : sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** Code lines of a file, comments dropped (a comment may quote a frame). */
function codeLines(path: string): { line: string; at: string }[] {
  const rel = relative(ROOT, path);
  return readFileSync(path, "utf8")
    .split("\n")
    .map((line, i) => ({ line, at: `${rel}:${i + 1}` }))
    .filter(({ line }) => !/^\s*(\/\/|\*|\/\*\*)/.test(line));
}

const WIRE_JSON = [
  // JSON.stringify over a literal that carries an envelope key
  /JSON\.stringify\(\s*\{[^}]*\b(ok|ev|op|request_id)\s*:/,
  // frame text written by hand
  /["'`]\{\\?"(ok|ev|op|request_id)\\?"\s*:/,
  // a reply object literal
  /\bok:\s*(true|false),\s*request_id\b/,
];

describe("the house", () => {
  it("builds wire frames only with the contract's envelope builders", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith(join("contract", "frames.ts"))) continue;
      for (const { line, at } of codeLines(file)) {
        if (WIRE_JSON.some((re) => re.test(line))) offenders.push(`${at}: ${line.trim()}`);
        if (/\{\s*ev:\s*"/.test(line) && !line.includes("encodeEvent(")) {
          offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("has transports that know frames, never the connection or dispatch", () => {
    const offenders: string[] = [];
    const wire = join(SRC, "instance", "wire");
    for (const name of ["uds.ts", "http.ts", "http-bind.ts", "ws-frames.ts", "transport.ts"]) {
      for (const { line, at } of codeLines(join(wire, name))) {
        if (/from "\.\/(connection|outbound)\.js"|from "\.\.\/(dispatch|server)\.js"/.test(line)) {
          offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("keeps the instance's internals out of its clients (the CLI runs it only by loading it on demand)", () => {
    const offenders: string[] = [];
    for (const dir of ["cli", "client", "mcp"]) {
      for (const file of sources(join(SRC, dir))) {
        for (const { line, at } of codeLines(file)) {
          if (/from "\.\.\/instance\//.test(line)) offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("has handlers typed by the contract: no casts and no non-null assertions", () => {
    const offenders: string[] = [];
    for (const file of sources(join(SRC, "instance", "handlers"))) {
      for (const { line, at } of codeLines(file)) {
        if (/\bas\s+(?!const\b)[A-Za-z{[]/.test(line) || /[\w)\]]!(\.|;|,|\))/.test(line)) {
          offenders.push(`${at}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("keeps the instance's composition root to wiring (at most 150 lines)", () => {
    const lines = readFileSync(join(SRC, "instance", "server.ts"), "utf8").split("\n").length;
    expect(lines).toBeLessThanOrEqual(150);
  });

  it("has one error type: no other class extends Error", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith(join("contract", "errors.ts"))) continue;
      for (const { line, at } of codeLines(file)) {
        if (/class \w+ extends Error\b/.test(line)) offenders.push(`${at}: ${line.trim()}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
