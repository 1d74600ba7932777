import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { tempDir } from "./helpers.js";

function file(content: unknown): string {
  const path = join(tempDir(), "config.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function errorOf(path: string): { code: string; message: string } {
  try {
    loadConfig(path);
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error("expected the config to be refused");
}

describe("ccmsg's config file", () => {
  it("a missing file is the empty config", () => {
    expect(loadConfig(join(tempDir(), "nope", "config.json"))).toEqual({});
  });

  it("reads the known keys", () => {
    const config = {
      checks: [
        { name: "test", command: "npm test" },
        { name: "lint", command: "npm run lint" },
      ],
      budget_usd: 5,
      handoff_path: "~/handoffs/widgets.md",
      linear: { project: "Widgets" },
      direct_delivery: false,
      codex_command: "/opt/codex/bin/codex",
      reservations: { on_conflict: "block" },
    };
    expect(loadConfig(file(config))).toEqual(config);
  });

  it("refuses unknown keys and wrong types, naming the file and the key", () => {
    const cases: [unknown, string][] = [
      [{ budget: 5 }, "budget: unknown key"],
      [{ budget_usd: "5" }, "budget_usd: must be a number"],
      [{ budget_usd: -1 }, "budget_usd: must be a number"],
      [{ checks: { name: "t" } }, "checks: must be an array"],
      [{ checks: [{ name: "t" }] }, "checks[0].command: must be a non-empty string"],
      [{ checks: [{ name: "t", command: "x", cwd: "/" }] }, "checks[0].cwd: unknown key"],
      [
        {
          checks: [
            { name: "t", command: "x" },
            { name: "t", command: "y" },
          ],
        },
        'duplicate check name "t"',
      ],
      [{ handoff_path: 3 }, "handoff_path: must be a non-empty string"],
      [{ linear: { team: "x" } }, "linear.team: unknown key"],
      [{ direct_delivery: "off" }, "direct_delivery: must be true or false"],
      [{ codex_command: "" }, "codex_command: must be a non-empty string"],
      [{ reservations: "block" }, "reservations: must be an object"],
      [
        { reservations: { on_conflict: "deny" } },
        'reservations.on_conflict: must be "warn" or "block"',
      ],
      [{ reservations: { mode: "warn" } }, "reservations.mode: unknown key"],
      [[], "(top level): must be a JSON object"],
    ];
    for (const [content, expected] of cases) {
      const path = file(content);
      const e = errorOf(path);
      expect(e.code).toBe("invalid_args");
      expect(e.message).toContain(path);
      expect(e.message).toContain(expected);
    }
  });

  it("refuses a file that is not JSON", () => {
    const path = file("{ checks: ");
    expect(errorOf(path).message).toMatch(new RegExp(`config ${path}: not valid JSON`));
  });
});
