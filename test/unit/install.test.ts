import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/instance.js";

// What a fresh clone installs is what package-lock.json records: these read
// the lock, not node_modules, so they judge the install a newcomer gets.

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string };
  [field: string]: unknown;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<
  string,
  unknown
> & { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};

/** The first release of each Node line our engines range admits (20, 22, 24). */
const SUPPORTED_LINES = ["20.0.0", "22.0.0", "24.0.0"].filter((v) =>
  satisfies(v, pkg.engines.node),
);

/** Whether `version` is in an engines range, for the forms npm packages use
 * there (`>=18`, `>= 10.x`, `^20.19.0 || >=22.12.0`, `20.x`, `*`). A form it
 * does not know fails the test rather than passing silently. */
function satisfies(version: string, range: string): boolean {
  const v = parts(version);
  return range.split("||").some((alt) =>
    alt
      .trim()
      .replace(/([<>=^~]+)\s+/g, "$1")
      .split(/\s+/)
      .every((c) => {
        if (c === "*" || c === "") return true;
        const m = /^(>=|>|<=|<|\^|~|=)?v?(\d+(?:\.(?:\d+|x))*)$/.exec(c);
        if (m === null) throw new Error(`unknown engines form: ${c} in ${range}`);
        const op = m[1] ?? "=";
        const spec = m[2]!.split(".");
        const floor = parts(spec.map((p) => (p === "x" ? "0" : p)).join("."));
        const cmp = compare(v, floor);
        const sameLine = (n: number) =>
          spec.slice(0, n).every((p, i) => p === "x" || Number(p) === v[i]);
        switch (op) {
          case ">=":
            return cmp >= 0;
          case ">":
            return cmp > 0;
          case "<=":
            return cmp <= 0;
          case "<":
            return cmp < 0;
          case "^":
            return cmp >= 0 && v[0] === floor[0];
          case "~":
            return cmp >= 0 && sameLine(2);
          default:
            return sameLine(spec.length);
        }
      }),
  );
}

function parts(version: string): number[] {
  const [a = 0, b = 0, c = 0] = version.split(".").map(Number);
  return [a, b, c];
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

describe("installing from a fresh clone", () => {
  it("every runtime dependency supports every Node line we do (no EBADENGINE on Node 20)", () => {
    expect(SUPPORTED_LINES).toEqual(["20.0.0", "22.0.0", "24.0.0"]);
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = entry.engines?.node;
      if (path === "" || range === undefined) continue;
      // The real harness the tests drive: a native binary whose package
      // declares Node >= 22 yet runs here (DR-0018 update, harness spec §11).
      if (path === "node_modules/@anthropic-ai/claude-code" && entry.dev) continue;
      // Development tools need only the Node that runs the tests; what ships
      // must run on every line the engines range names.
      const lines = entry.dev ? [process.versions.node] : SUPPORTED_LINES;
      for (const v of lines)
        if (!satisfies(v, range))
          refusing.push(`${path}@${entry.version} needs node ${range}, not ${v}`);
    }
    expect(refusing).toEqual([]);
  });

  it("the lock's root entry is what package.json states (npm install leaves it unchanged)", () => {
    const root = lock.packages[""]!;
    for (const field of ["name", "version", "license", "bin", "engines"] as const)
      expect({ field, value: root[field] }).toEqual({ field, value: pkg[field] });
    expect(root.dependencies).toEqual(pkg.dependencies);
    expect(root.devDependencies).toEqual(pkg.devDependencies);
  });
});
