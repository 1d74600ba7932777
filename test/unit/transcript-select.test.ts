import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";
import { ContractError } from "../../src/contract/errors.js";
import {
  DEFAULT_DUMP_PRESETS,
  dumpSelectors,
  presetProblems,
  presetTable,
  selectTypes,
} from "../../src/contract/transcript-select.js";
import type { DumpPreset } from "../../src/contract/transcripts.js";

// Selections (contract §10.6): left to right, prefixes by segment, presets
// expanded in place, the default when nothing (or a removal) comes first.

const TYPES = [
  "message:user:in",
  "message:user:out",
  "message:sub:out",
  "message:session:in",
  "thinking",
  "tool:Bash",
  "tool:Agent",
  "tool:mcp__x__y",
  "system:attachment:todo_reminder",
  "system:unknown",
  "hook:Stop",
];
const kept = (selectors?: string[], presets: DumpPreset[] = []) => {
  const s = selectTypes(selectors, presetTable(presets));
  return TYPES.filter((t) => s.keeps(t));
};
const preset = (name: string, types: string[]): DumpPreset => ({ name, opts: { types } });

function refusal(fn: () => unknown): { code: string; msg: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof ContractError) return { code: error.code, msg: error.message };
    throw error;
  }
  throw new Error("not refused");
}

describe("select", () => {
  it("keeps everything but attachments by default, and spells the default out", () => {
    expect(kept()).toEqual(TYPES.filter((t) => !t.startsWith("system:attachment")));
    expect(selectTypes([]).applied).toEqual(["-system:attachment"]);
  });

  it("starts from nothing when the first selector adds, from the default when it removes", () => {
    expect(kept(["tool"])).toEqual(["tool:Bash", "tool:Agent", "tool:mcp__x__y"]);
    expect(kept(["-thinking", "-tool"])).toEqual(
      TYPES.filter(
        (t) => !t.startsWith("system:attachment") && t !== "thinking" && !t.startsWith("tool"),
      ),
    );
    expect(selectTypes(["-thinking"]).applied).toEqual(["-system:attachment", "-thinking"]);
  });

  it("applies selectors left to right: the last one that matches decides", () => {
    expect(kept(["tool", "-tool:Bash"])).toEqual(["tool:Agent", "tool:mcp__x__y"]);
    expect(kept(["-tool", "tool:Bash"])).toContain("tool:Bash");
    expect(kept(["message", "-message:user", "message:user:in"])).toEqual([
      "message:user:in",
      "message:sub:out",
      "message:session:in",
    ]);
    // A prefix ends at a segment boundary.
    expect(kept(["tool:Ba"])).toEqual([]);
    expect(kept(["system:attachment"])).toEqual(["system:attachment:todo_reminder"]);
  });

  it("expands presets in place, recursively; -@p removes what p adds", () => {
    const presets = [
      preset("talk", ["message", "-message:sub"]),
      preset("work", ["@talk", "tool"]),
    ];
    expect(selectTypes(["@work", "-tool:Agent"], presetTable(presets)).applied).toEqual([
      "message",
      "-message:sub",
      "tool",
      "-tool:Agent",
    ]);
    expect(kept(["@work"], presets)).toEqual([
      "message:user:in",
      "message:user:out",
      "message:session:in",
      "tool:Bash",
      "tool:Agent",
      "tool:mcp__x__y",
    ]);
    expect(selectTypes(["-@talk"], presetTable(presets)).applied).toEqual([
      "-system:attachment",
      "-message",
    ]);
  });

  it("refuses an unknown preset (not_found) and a cycle (invalid_args)", () => {
    expect(refusal(() => selectTypes(["@nope"])).code).toBe("not_found");
    const cyclic = presetTable([preset("a", ["@b"]), preset("b", ["tool", "@a"])]);
    const r = refusal(() => selectTypes(["@a"], cyclic));
    expect(r).toEqual({ code: "invalid_args", msg: "preset cycle: @a → @b → @a" });
  });

  it("builds a dump's selection: the preset, then types, then the shorthands", () => {
    expect(
      dumpSelectors({ preset: "p", types: ["tool"], no_thinking: true, no_agent: true }),
    ).toEqual(["@p", "tool", "-thinking", "-message:sub", "-tool:Agent"]);
    expect(dumpSelectors({})).toEqual([]);
  });
});

describe("dump presets in the config", () => {
  it("are checked by hand: shape, names, selectors, references and cycles", () => {
    expect(presetProblems(DEFAULT_DUMP_PRESETS)).toEqual([]);
    const good = [
      preset("talk", ["message"]),
      { ...preset("all", ["@talk", "tool"]), description: "d" },
    ];
    expect(checkConfig({ dump_presets: good }, "c.json").dump_presets).toEqual(good);
    const bad: [unknown, string][] = [
      [{ dump_presets: {} }, "dump_presets: must be an array"],
      [{ dump_presets: [{ name: "x" }] }, "dump_presets[0].opts: must be an object"],
      [
        { dump_presets: [{ name: "x", opts: { types: [1] } }] },
        "dump_presets[0].opts.types: must be an array of selectors",
      ],
      [
        { dump_presets: [{ name: "x", opts: { types: [] }, extra: 1 }] },
        "dump_presets[0].extra: unknown key",
      ],
      [{ dump_presets: [preset("x", []), preset("x", [])] }, "x: defined twice"],
      [{ dump_presets: [preset("x y", [])] }, "x y: a preset name is"],
      [{ dump_presets: [preset("x", ["Tool"])] }, 'selector "Tool" is not'],
      [{ dump_presets: [preset("x", ["@y"])] }, 'no dump preset named "y"'],
      [{ dump_presets: [preset("x", ["@x"])] }, "preset cycle: @x → @x"],
    ];
    for (const [value, words] of bad) {
      const r = refusal(() => checkConfig(value, "c.json"));
      expect(r.code).toBe("invalid_args");
      expect(r.msg).toContain(words);
      expect(r.msg).toContain("config c.json: ");
    }
  });
});
