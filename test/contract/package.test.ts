import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

// `npm test` builds first; this proves the published subpaths resolve from the
// package root exactly as a consumer's `import('ccmsg/contract')` would.
describe("the ccmsg/contract package subpath", () => {
  it("imports from the built package and exposes the tables", () => {
    const out = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const c = await import("ccmsg/contract");
         const f = await import("ccmsg/contract/fixtures");
         c.compileContract();
         console.log(JSON.stringify({
           version: c.PROTOCOL_VERSION,
           ops: c.GENERATION_OP_NAMES.length,
           topics: c.GENERATION_TOPIC_KINDS.length,
           codes: c.ERROR_CODES.length,
           ping: c.requestErrors("instance_ping", f.OP_FIXTURES.instance_ping.request),
         }));`,
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(JSON.parse(out)).toEqual({ version: 3, ops: 46, topics: 12, codes: 20, ping: [] });
  });
});
