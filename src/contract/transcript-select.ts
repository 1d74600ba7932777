import { ContractError, contractError } from "./errors.js";
import { TRANSCRIPT_ITEM_SELECTOR_PATTERN } from "./identifiers.js";
import type { DumpPreset } from "./transcripts.js";

// Item selections (contract §10.6): which item types a read or a dump keeps.
// Pure vocabulary logic, shared by the instance (reads, dumps, preset checks)
// and the configuration loader.
//
// Selectors apply left to right: a name or prefix adds, `-name` removes,
// `@preset` expands in place. The last selector that matches a type decides
// it, which is exactly "apply them in order" for sets. A selection with no
// selectors, or whose first selector (after expansion) removes, starts from
// the default — everything except `system:attachment:*` — so `-thinking` alone
// means "the default without thinking" rather than "nothing".

/** What the default selection leaves out. */
export const DEFAULT_SELECTION_EXCLUDES = "system:attachment";

const selectorRe = new RegExp(TRANSCRIPT_ITEM_SELECTOR_PATTERN);
/** What `@name` may reference (the selector pattern's preset part). */
const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Whether `prefix` selects `type`: the same name, or a prefix ending at a
 * segment boundary (`tool` selects `tool:Bash`, not `toolbox`). */
export function typeMatches(prefix: string, type: string): boolean {
  return type === prefix || (type.startsWith(prefix) && type.charCodeAt(prefix.length) === 58);
}

/** A selection ready to test types with. */
export interface Selection {
  /** The selectors as applied: presets expanded, exclusions kept, and the
   * default spelled out (`-system:attachment` first) when it is the base. */
  applied: string[];
  /** Whether an item of `type` is kept. */
  keeps(type: string): boolean;
}

/** Presets by name, as configured (references unexpanded). */
export type PresetTable = ReadonlyMap<string, readonly string[]>;

export function presetTable(presets: readonly DumpPreset[]): PresetTable {
  return new Map(presets.map((p) => [p.name, p.opts.types]));
}

/**
 * Expand `@preset` references in place. `-@p` removes what `p` adds (its own
 * removals are not turned into additions: "not p" must never re-add a type).
 * An unknown name is `not_found`; a malformed selector or a cycle is
 * `invalid_args`.
 */
function expand(
  selectors: readonly string[],
  presets: PresetTable,
  into: string[],
  trail: string[],
  negate: boolean,
): void {
  for (const selector of selectors) {
    if (!selectorRe.test(selector))
      throw contractError(
        "invalid_args",
        `selector "${selector}" is not an item type, prefix or @preset`,
      );
    const removes = selector.startsWith("-");
    const body = removes ? selector.slice(1) : selector;
    if (!body.startsWith("@")) {
      if (negate) {
        if (!removes) into.push(`-${body}`);
      } else into.push(selector);
      continue;
    }
    const name = body.slice(1);
    const inner = presets.get(name);
    if (inner === undefined) throw contractError("not_found", `no dump preset named "${name}"`);
    if (trail.includes(name))
      throw contractError(
        "invalid_args",
        `preset cycle: ${[...trail, name].map((n) => `@${n}`).join(" → ")}`,
      );
    expand(inner, presets, into, [...trail, name], negate !== removes);
  }
}

/** The selection `selectors` describe over `presets`; throws a
 * ContractError when it cannot be applied. */
export function selectTypes(
  selectors: readonly string[] | undefined,
  presets: PresetTable = new Map(),
): Selection {
  const expanded: string[] = [];
  expand(selectors ?? [], presets, expanded, [], false);
  const applied =
    expanded.length === 0 || expanded[0]!.startsWith("-")
      ? [`-${DEFAULT_SELECTION_EXCLUDES}`, ...expanded]
      : expanded;
  // Evaluated newest rule first: the last match decides.
  const rules = applied
    .map((s) => (s.startsWith("-") ? { add: false, prefix: s.slice(1) } : { add: true, prefix: s }))
    .reverse();
  const base = applied[0]!.startsWith("-");
  const cache = new Map<string, boolean>();
  return {
    applied,
    keeps(type) {
      let kept = cache.get(type);
      if (kept === undefined) {
        kept = rules.find((r) => typeMatches(r.prefix, type))?.add ?? base;
        cache.set(type, kept);
      }
      return kept;
    },
  };
}

/** The selectors `session_dump_write` applies: the preset as the base, then
 * `types`, then the shorthands (last, so they win). */
export function dumpSelectors(args: {
  preset?: string;
  types?: readonly string[];
  no_thinking?: boolean;
  no_agent?: boolean;
}): string[] {
  const out: string[] = [];
  if (args.preset !== undefined) out.push(`@${args.preset}`);
  out.push(...(args.types ?? []));
  if (args.no_thinking) out.push("-thinking");
  if (args.no_agent) out.push("-message:sub", "-tool:Agent");
  return out;
}

/** What is wrong with a list of presets (unique names, valid selectors, known
 * references, no cycles), one line each; empty when they can be used. */
export function presetProblems(presets: readonly DumpPreset[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of presets) {
    if (seen.has(p.name)) out.push(`${p.name}: defined twice`);
    seen.add(p.name);
  }
  const table = presetTable(presets);
  for (const p of presets) {
    if (!PRESET_NAME.test(p.name)) {
      out.push(`${p.name}: a preset name is a letter or digit, then letters, digits, _ or -`);
      continue;
    }
    try {
      selectTypes([`@${p.name}`], table);
    } catch (error) {
      if (!(error instanceof ContractError)) throw error;
      out.push(`${p.name}: ${error.message}`);
    }
  }
  return out;
}

/** The presets an instance offers when its configuration names none
 * (`dump_presets` in config.json replaces them whole). */
export const DEFAULT_DUMP_PRESETS: readonly DumpPreset[] = [
  {
    name: "conversation",
    description: "who said what: the person, sub-agents, other sessions, and the person's commands",
    opts: { types: ["message", "notice", "system:compact"] },
  },
  {
    name: "tools",
    description: "every tool call and its result",
    opts: { types: ["tool"] },
  },
  {
    name: "problems",
    description: "API errors, interrupts, and records the reader could not place",
    opts: { types: ["system:api-error", "notice:interrupt", "system:unknown"] },
  },
];
