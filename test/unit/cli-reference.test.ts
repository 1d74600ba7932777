import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/instance.js";

// docs/cli.md is generated from the command table the CLI's help reads
// (scripts/cli-reference.mjs runs the built `ccmsg help`): a command added,
// renamed or re-worded in src/cli/main.ts without regenerating it fails here.

const run = promisify(execFile);

describe("the CLI reference", () => {
  it("docs/cli.md is what `npm run docs:cli` writes from the command table now", async () => {
    const { stdout } = await run(process.execPath, [
      join(ROOT, "scripts", "cli-reference.mjs"),
      "--print",
    ]);
    const committed = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");
    expect(
      committed,
      "docs/cli.md is out of date with `ccmsg help`: run `npm run docs:cli` and commit docs/cli.md",
    ).toBe(stdout);
  });
});
