import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { contractError } from "../../contract/errors.js";
import { writeFileAtomic } from "../../state/atomic-write.js";

// Allow rules for ccmsg's own tools in a Claude Code settings file (DR-0055),
// so a woken session runs `ccmsg reply` without waiting on a permission
// prompt — only if the person says so. Claude Code 2.1.328 takes, verified by
// running it: `Bash(<prefix>:*)` for a command and its arguments, and
// `mcp__plugin_<plugin>_<server>` for every tool of a plugin's MCP server.
// What was added is recorded, so uninstall takes out exactly those rules and
// never one the person had or added.

/** The commands the ccmsg skill tells a model to run (harness/plugin/skill.ts). */
const COMMANDS = ["post", "reply", "peers", "notify", "dump", "reserve", "release", "stopping"];
/** The plugin's MCP server (plugin `ccmsg`, server `ccmsg` in its `.mcp.json`). */
const MCP_SERVER_RULE = "mcp__plugin_ccmsg_ccmsg";

export const CLAUDE_ALLOW_RULES: readonly string[] = [
  ...COMMANDS.map((c) => `Bash(ccmsg ${c}:*)`),
  MCP_SERVER_RULE,
];

/** Claude Code's settings scopes, as its own `--scope` names them. */
export const SETTINGS_SCOPES = ["user", "project", "local"] as const;
export type SettingsScope = (typeof SETTINGS_SCOPES)[number];

/** The settings file of a scope: the config home's for `user`, the current
 * directory's `.claude/` for `project` (shared) and `local` (not committed). */
export function settingsPath(scope: SettingsScope, env: NodeJS.ProcessEnv, cwd: string): string {
  if (scope === "project") return join(cwd, ".claude", "settings.json");
  if (scope === "local") return join(cwd, ".claude", "settings.local.json");
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude"), "settings.json");
}

/** What an install added to a settings file, kept in the plugin's receipt. */
export interface AllowRecord {
  path: string;
  /** Exactly the rules ccmsg added (not those that were there already). */
  rules: string[];
  /** What ccmsg created to hold them: taken out again when left empty. */
  created: ("dir" | "file" | "permissions" | "allow")[];
}

type Json = Record<string, unknown>;

function readSettings(path: string): Json | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw contractError(
      "invalid_args",
      `${path} is not a JSON object; ccmsg will not rewrite it. Fix it, then install again`,
    );
  const permissions = (value as Json).permissions;
  if (
    permissions !== undefined &&
    (typeof permissions !== "object" ||
      permissions === null ||
      ((permissions as Json).allow !== undefined && !Array.isArray((permissions as Json).allow)))
  )
    throw contractError(
      "invalid_args",
      `${path}: permissions.allow is not a list; ccmsg will not rewrite it`,
    );
  return value as Json;
}

/** Refuse a settings file ccmsg could not rewrite, before anything else of
 * an install is done. */
export function checkSettings(path: string): void {
  readSettings(path);
}

function writeSettings(path: string, value: Json): void {
  const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o644;
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/**
 * Add `rules` to `path`'s `permissions.allow`, those not there already, and
 * say which were added (nothing is written on a dry run). `kept`: rules an
 * earlier install added to this file, still ccmsg's.
 */
export function addAllowRules(
  path: string,
  rules: readonly string[],
  kept: AllowRecord | undefined,
  dryRun: boolean,
): { record: AllowRecord; added: string[] } {
  const current = readSettings(path);
  const value: Json = current ?? {};
  const created: AllowRecord["created"] = [...(kept?.created ?? [])];
  if (current === undefined) created.push("file");
  if (!existsSync(dirname(path))) created.push("dir");
  if (value.permissions === undefined) {
    value.permissions = {};
    created.push("permissions");
  }
  const permissions = value.permissions as Json;
  if (permissions.allow === undefined) {
    permissions.allow = [];
    created.push("allow");
  }
  const allow = permissions.allow as unknown[];
  const added = rules.filter((r) => !allow.includes(r));
  allow.push(...added);
  const ours = [...(kept?.rules ?? []).filter((r) => allow.includes(r)), ...added];
  if (added.length > 0 && !dryRun) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    writeSettings(path, value);
  }
  return { record: { path, rules: ours, created: [...new Set(created)] }, added };
}

/** Take the recorded rules out of their file again, and what ccmsg created
 * to hold them when it is left empty. Returns the rules removed. */
export function removeAllowRules(record: AllowRecord, dryRun: boolean): string[] {
  const value = readSettings(record.path);
  const permissions = value?.permissions as Json | undefined;
  const allow = permissions?.allow as unknown[] | undefined;
  if (value === undefined || permissions === undefined || allow === undefined) return [];
  const removed = record.rules.filter((r) => allow.includes(r));
  if (removed.length === 0 || dryRun) return removed;
  permissions.allow = allow.filter((r) => typeof r !== "string" || !removed.includes(r));
  const made = new Set(record.created);
  if (made.has("allow") && (permissions.allow as unknown[]).length === 0) delete permissions.allow;
  if (made.has("permissions") && Object.keys(permissions).length === 0) delete value.permissions;
  if (made.has("file") && Object.keys(value).length === 0) {
    unlinkSync(record.path);
    const dir = dirname(record.path);
    if (made.has("dir") && readdirSync(dir).length === 0) rmdirSync(dir);
  } else writeSettings(record.path, value);
  return removed;
}
