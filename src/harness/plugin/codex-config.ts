import { contractError } from "../../contract/errors.js";

// ccmsg's parts of the user's own Codex files: handlers in `hooks.json` and
// one table in `config.toml`. Both edits leave everything else as it was:
// the hooks file keeps its other entries and its indentation, and the TOML
// file is edited as text (a block between marker comments), so the person's
// comments and layout survive. Codex's own `codex mcp add` appends a table
// the same way.

// --- hooks.json ----------------------------------------------------------

export interface CodexHook {
  event: string;
  matcher?: string;
  command: string;
  timeout: number;
}

/** A handler command ccmsg wrote: one of its scripts, under any state dir. */
export function isCcmsgHook(command: unknown): boolean {
  return (
    typeof command === "string" && /\/plugins\/codex\/ccmsg-[a-z-]+\.sh'?$/.test(command.trim())
  );
}

type Json = Record<string, unknown>;

function parseHooksFile(text: string, path: string): Json {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw contractError(
      "invalid_args",
      `${path} is not valid JSON; ccmsg will not rewrite it. Fix it, then install again`,
    );
  }
  const hooks = (value as Json | null)?.hooks;
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    (hooks !== undefined && (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)))
  )
    throw contractError(
      "invalid_args",
      `${path} is not a hooks file ({"hooks": {…}}); ccmsg will not rewrite it`,
    );
  return value as Json;
}

/** The hooks without ccmsg's handlers; groups and events that held only
 * ccmsg's handlers go too. */
function withoutOurs(file: Json): Json {
  const events = (file.hooks ?? {}) as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) {
      kept[event] = groups;
      continue;
    }
    const rest = groups.flatMap((group: unknown) => {
      const handlers = (group as Json | null)?.hooks;
      if (!Array.isArray(handlers)) return [group];
      const mine = handlers.filter((h: unknown) => isCcmsgHook((h as Json | null)?.command));
      if (mine.length === 0) return [group];
      const others = handlers.filter((h) => !mine.includes(h));
      return others.length === 0 ? [] : [{ ...(group as Json), hooks: others }];
    });
    if (rest.length > 0 || groups.length === 0) kept[event] = rest;
  }
  return { ...file, hooks: kept };
}

/** How the file is indented (two spaces when it cannot tell). */
function indentOf(text: string): string | number {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? 2;
}

function serialise(value: Json, like: string): string {
  return `${JSON.stringify(value, null, indentOf(like))}\n`;
}

export function mergeCodexHooks(current: string | undefined, ours: CodexHook[], path: string) {
  const text = current ?? "";
  const file = parseHooksFile(text, path);
  const merged = withoutOurs(file);
  const events = merged.hooks as Record<string, unknown[]>;
  for (const h of ours) {
    const group: Json = {};
    if (h.matcher !== undefined) group.matcher = h.matcher;
    group.hooks = [{ type: "command", command: h.command, timeout: h.timeout }];
    events[h.event] = [...(events[h.event] ?? []), group];
  }
  // Unchanged in meaning: keep the bytes (a second install writes nothing).
  if (text.trim() !== "" && JSON.stringify(merged) === JSON.stringify(file)) return text;
  return serialise(merged, text);
}

/** The hooks file without ccmsg's handlers; undefined when nothing else is left. */
export function unmergeCodexHooks(current: string): string | undefined {
  let file: Json;
  try {
    file = parseHooksFile(current, "hooks.json");
  } catch {
    return current;
  }
  const rest = withoutOurs(file);
  if (JSON.stringify(rest) === JSON.stringify(file)) return current;
  const keys = Object.keys(rest);
  if (keys.length === 1 && Object.keys(rest.hooks as Json).length === 0) return undefined;
  return serialise(rest, current);
}

/** Which of ccmsg's handlers the hooks file holds, exactly as written. */
export function presentCodexHooks(current: string | undefined, ours: CodexHook[]): CodexHook[] {
  let file: Json;
  try {
    file = parseHooksFile(current ?? "", "hooks.json");
  } catch {
    return [];
  }
  const events = (file.hooks ?? {}) as Record<string, unknown>;
  return ours.filter((h) => {
    const groups = events[h.event];
    return (
      Array.isArray(groups) &&
      groups.some(
        (g: unknown) =>
          (g as Json | null)?.matcher === h.matcher &&
          Array.isArray((g as Json).hooks) &&
          ((g as Json).hooks as Json[]).some(
            (x) => x?.command === h.command && x?.timeout === h.timeout && x?.type === "command",
          ),
      )
    );
  });
}

// --- config.toml ---------------------------------------------------------

const BEGIN =
  "# >>> ccmsg: written by `ccmsg plugin install codex`; `ccmsg plugin uninstall codex` removes it";
const END = "# <<< ccmsg";

/** A TOML basic string (JSON's escapes are all valid TOML escapes). */
const tomlString = (s: string) => JSON.stringify(s);

export function mcpBlock(command: string, args: string[], env: Record<string, string>): string {
  const inline = Object.entries(env)
    .map(([k, v]) => `${k} = ${tomlString(v)}`)
    .join(", ");
  return [
    BEGIN,
    "[mcp_servers.ccmsg]",
    `command = ${tomlString(command)}`,
    `args = [${args.map(tomlString).join(", ")}]`,
    `env = { ${inline} }`,
    END,
  ].join("\n");
}

/** The table a TOML line opens (`[a."b c"]` → `a.b c`), if it is a header. */
function tableOf(line: string): string | undefined {
  const header = /^\[\[?\s*([^[\]]+?)\s*\]\]?\s*(#.*)?$/.exec(line.trim());
  return header?.[1]?.replace(/["'\s]/g, "");
}

const isOurTable = (table: string) =>
  table === "mcp_servers.ccmsg" || table.startsWith("mcp_servers.ccmsg.");

/**
 * Where ccmsg's block sits: [start of the BEGIN line, end of its last line).
 * The block is BEGIN, ccmsg's table and, when it is still right behind them,
 * END. Codex's own writes (the trust `/hooks` records, `codex mcp add`)
 * rewrite the file and append their tables after the last one, between
 * ccmsg's table and END, which then sits at the end of the file: a table
 * that is not ccmsg's ends the block, and END, wherever it went, is `stray`.
 */
function blockAt(text: string): { start: number; end: number; stray?: number } | undefined {
  let start = 0;
  if (!text.startsWith(`${BEGIN}\n`)) {
    const i = text.indexOf(`\n${BEGIN}\n`);
    if (i === -1) return undefined;
    start = i + 1;
  }
  let at = start + BEGIN.length + 1;
  let lastOwn = at;
  while (at < text.length) {
    const eol = text.indexOf("\n", at);
    const lineEnd = eol === -1 ? text.length : eol;
    const line = text.slice(at, lineEnd);
    if (line === END) return { start, end: lineEnd };
    const table = tableOf(line);
    if (table !== undefined && !isOurTable(table)) break;
    if (line.trim() !== "") lastOwn = lineEnd;
    at = lineEnd + 1;
  }
  // END as a line of its own further down, where Codex's rewrite left it.
  let stray = text.indexOf(`\n${END}`, lastOwn);
  while (stray !== -1 && ![undefined, "\n"].includes(text[stray + 1 + END.length]))
    stray = text.indexOf(`\n${END}`, stray + 1);
  return { start, end: lastOwn, ...(stray === -1 ? {} : { stray }) };
}

/** `text` without the stray END line found at `at` (its newline first). */
function withoutStray(text: string, at: number | undefined): string {
  if (at === undefined) return text;
  return text.slice(0, at) + text.slice(at + 1 + END.length);
}

/** Whether the file defines `mcp_servers.ccmsg` outside ccmsg's block (the
 * person's own entry: left alone, and reported). */
export function foreignMcpEntry(text: string): boolean {
  const at = blockAt(text);
  const outside = at ? text.slice(0, at.start) + text.slice(at.end) : text;
  let table = "";
  for (const raw of outside.split("\n")) {
    const line = raw.trim();
    const header = tableOf(line);
    if (header !== undefined) {
      table = header;
      if (isOurTable(table)) return true;
      continue;
    }
    const key = /^([^=#]+?)\s*=/.exec(line)?.[1]?.replace(/["'\s]/g, "");
    if (key === undefined) continue;
    if (isOurTable(table === "" ? key : `${table}.${key}`)) return true;
  }
  return false;
}

export function mergeCodexConfig(current: string | undefined, block: string): string {
  const text = current ?? "";
  const at = blockAt(text);
  if (at) {
    const rest = withoutStray(text, at.stray);
    return rest.slice(0, at.start) + block + rest.slice(at.end);
  }
  if (foreignMcpEntry(text)) return text;
  if (text === "") return `${block}\n`;
  return `${text}${text.endsWith("\n") ? "" : "\n"}\n${block}\n`;
}

export function unmergeCodexConfig(current: string): string | undefined {
  const at = blockAt(current);
  if (!at) return current;
  const text = withoutStray(current, at.stray);
  let before = text.slice(0, at.start);
  let after = text.slice(at.end);
  if (after.startsWith("\n")) after = after.slice(1);
  // One blank line between what was before and after the block, not two.
  if (before.endsWith("\n\n")) after = after.replace(/^\n+/, "");
  // The blank line ccmsg put before its block at the end of the file.
  if (after === "" && before.endsWith("\n\n")) before = before.slice(0, -1);
  const rest = before + after;
  return rest.trim() === "" ? undefined : rest;
}

export function hasCodexBlock(current: string | undefined, block: string): boolean {
  return current?.includes(block) === true;
}

/** `[features] hooks = false` (or the older `codex_hooks = false`). */
export function hooksDisabled(text: string): boolean {
  let table = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[\s*([^[\]]+?)\s*\]/.exec(line);
    if (header) {
      table = header[1]!.replace(/["'\s]/g, "");
      continue;
    }
    const m = /^([A-Za-z0-9_."']+)\s*=\s*false\b/.exec(line);
    if (!m) continue;
    const full = (table === "" ? "" : `${table}.`) + m[1]!.replace(/["'\s]/g, "");
    if (full === "features.hooks" || full === "features.codex_hooks") return true;
  }
  return false;
}
