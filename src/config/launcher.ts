import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { ContractError } from "../contract/errors.js";
import { SHELL_IDENTIFIER_PATTERN } from "../contract/launcher.js";

// The `launcher` section of ccmsg's config (contract §4.3.5): the directories a
// new session may start in and the templates that start one. Checked by hand
// like the rest of the file, so a typo names its key instead of switching the
// launcher off.

/** A template written as a shell program, exactly as `launcher_config_read`
 * shows it. */
export interface CommandTemplateConfig {
  name: string;
  command: string;
  params: { name: string; default: string }[];
}

/** A template ccmsg writes the command of: the harness, its extra arguments
 * and variables (harness/launch.ts turns it into a shell program). */
export interface HarnessTemplateConfig {
  name: string;
  harness: "claude" | "codex";
  args: string[];
  env: Record<string, string>;
}

export type TemplateConfig = CommandTemplateConfig | HarnessTemplateConfig;

export interface LauncherConfig {
  /** Absolute, `~` expanded, normalized; a new session's cwd lies under one. */
  roots: string[];
  /** In order: the first is the default. */
  templates: TemplateConfig[];
  /** The tmux session new windows open in (default "ccmsg"). */
  tmux_session?: string;
  /** How long a launch may take before the instance gives up on it (ms). */
  timeout_ms?: number;
}

type Bad = (key: string, why: string) => ContractError;

const SHAPE =
  "must be an object {roots: [dir…], templates: [{name, harness, args?, env?} | {name, command, params?}…], tmux_session?, timeout_ms?}";
const IDENTIFIER = new RegExp(SHELL_IDENTIFIER_PATTERN);

export function checkLauncher(
  value: unknown,
  bad: Bad,
  env: NodeJS.ProcessEnv = process.env,
): LauncherConfig {
  if (!isObject(value)) throw bad("launcher", SHAPE);
  for (const k of Object.keys(value))
    if (!["roots", "templates", "tmux_session", "timeout_ms"].includes(k))
      throw bad(`launcher.${k}`, "unknown key");
  const roots = value.roots;
  if (!Array.isArray(roots) || roots.length === 0)
    throw bad("launcher.roots", "must be a non-empty array of directories");
  const out: LauncherConfig = {
    roots: roots.map((r: unknown, i: number) => {
      if (!nonEmpty(r)) throw bad(`launcher.roots[${i}]`, "must be a non-empty string");
      const expanded =
        r === "~" || r.startsWith("~/") ? join(env.HOME || homedir(), r.slice(1)) : r;
      if (!isAbsolute(expanded))
        throw bad(`launcher.roots[${i}]`, "must be an absolute path (or start with ~/)");
      return resolve(expanded);
    }),
    templates: [],
  };
  const templates = value.templates;
  if (!Array.isArray(templates) || templates.length === 0)
    throw bad("launcher.templates", "must be a non-empty array of templates");
  const names = new Set<string>();
  out.templates = templates.map((t: unknown, i: number) => {
    const template = checkTemplate(t, `launcher.templates[${i}]`, bad);
    if (names.has(template.name))
      throw bad(`launcher.templates[${i}].name`, `duplicate template name "${template.name}"`);
    names.add(template.name);
    return template;
  });
  if (value.tmux_session !== undefined) {
    // tmux reads `:` and `.` in a target as window and pane separators.
    if (!nonEmpty(value.tmux_session) || /[:.\s]/.test(value.tmux_session))
      throw bad("launcher.tmux_session", "must be a name without spaces, `:` or `.`");
    out.tmux_session = value.tmux_session;
  }
  if (value.timeout_ms !== undefined) {
    const ms = value.timeout_ms;
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > 600_000)
      throw bad("launcher.timeout_ms", "must be an integer from 1 to 600000");
    out.timeout_ms = ms;
  }
  return out;
}

function checkTemplate(t: unknown, at: string, bad: Bad): TemplateConfig {
  const shape = "must be {name, harness: claude|codex, args?, env?} or {name, command, params?}";
  if (!isObject(t)) throw bad(at, shape);
  if (!nonEmpty(t.name)) throw bad(`${at}.name`, "must be a non-empty string");
  if (t.harness !== undefined && t.command !== undefined)
    throw bad(at, "give either harness or command, not both");
  if (t.harness !== undefined) {
    for (const k of Object.keys(t))
      if (!["name", "harness", "args", "env"].includes(k)) throw bad(`${at}.${k}`, "unknown key");
    if (t.harness !== "claude" && t.harness !== "codex")
      throw bad(`${at}.harness`, 'must be "claude" or "codex"');
    if (t.args !== undefined && !(Array.isArray(t.args) && t.args.every(isString)))
      throw bad(`${at}.args`, "must be an array of strings");
    const env: Record<string, string> = {};
    if (t.env !== undefined) {
      if (!isObject(t.env)) throw bad(`${at}.env`, "must be an object of strings");
      for (const [k, v] of Object.entries(t.env)) {
        if (!IDENTIFIER.test(k)) throw bad(`${at}.env.${k}`, "not a shell variable name");
        if (typeof v !== "string") throw bad(`${at}.env.${k}`, "must be a string");
        env[k] = v;
      }
    }
    return { name: t.name, harness: t.harness, args: [...((t.args as string[]) ?? [])], env };
  }
  if (t.command === undefined) throw bad(at, shape);
  for (const k of Object.keys(t))
    if (!["name", "command", "params"].includes(k)) throw bad(`${at}.${k}`, "unknown key");
  if (!nonEmpty(t.command)) throw bad(`${at}.command`, "must be a non-empty string");
  const params: CommandTemplateConfig["params"] = [];
  if (t.params !== undefined) {
    if (!Array.isArray(t.params)) throw bad(`${at}.params`, "must be an array of {name, default}");
    for (const [j, p] of t.params.entries()) {
      const pat = `${at}.params[${j}]`;
      if (!isObject(p) || !isString(p.name) || !IDENTIFIER.test(p.name))
        throw bad(
          `${pat}.name`,
          "must be a shell variable name (a letter or _, then letters, digits or _)",
        );
      if (!isString(p.default ?? "")) throw bad(`${pat}.default`, "must be a string");
      for (const k of Object.keys(p))
        if (k !== "name" && k !== "default") throw bad(`${pat}.${k}`, "unknown key");
      if (params.some((q) => q.name === p.name))
        throw bad(`${pat}.name`, `duplicate parameter "${p.name}"`);
      params.push({ name: p.name, default: (p.default as string | undefined) ?? "" });
    }
  }
  return { name: t.name, command: t.command, params };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

function nonEmpty(v: unknown): v is string {
  return typeof v === "string" && v.trim() !== "";
}
