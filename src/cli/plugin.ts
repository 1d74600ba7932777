import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { Client } from "../client/client.js";
import { UsageError } from "../client/flags.js";
import { hookRouteUrl } from "../client/hook-route.js";
import { loadConfig } from "../config/config.js";
import {
  ATTENTION_CODEX_HOLD_DEFAULT_MS,
  ATTENTION_HOLD_DEFAULT_MS,
} from "../contract/attention.js";
import {
  CLAUDE_ALLOW_RULES,
  SETTINGS_SCOPES,
  type SettingsScope,
  settingsPath,
} from "../harness/plugin/allow-rules.js";
import { claudeStatus, installClaude, uninstallClaude } from "../harness/plugin/claude.js";
import { HOOK_PATH } from "../harness/plugin/claude-paths.js";
import { codexStatus, installCodex, uninstallCodex } from "../harness/plugin/codex.js";
import { runningInvocation } from "../harness/plugin/command-line.js";
import type { Outcome, PluginContext, Status } from "../harness/plugin/report.js";
import { loadOrMintHookToken, readHookToken } from "../state/hook-token.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

// `ccmsg plugin install|status|uninstall claude|codex`: wire this ccmsg into
// a harness, say what is wired, take it out again. The work is in
// src/harness/plugin/; this module reads the command line and prints.

const USAGE =
  "ccmsg plugin install|status|uninstall claude|codex [--dry-run] [--allow-tools|--no-allow-tools] [--scope user|project|local]";

const HARNESSES = {
  claude: { install: installClaude, uninstall: uninstallClaude, status: claudeStatus },
  codex: { install: installCodex, uninstall: uninstallCodex, status: codexStatus },
} as const;

export const plugin: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      "dry-run": { type: "boolean" },
      "allow-tools": { type: "boolean" },
      "no-allow-tools": { type: "boolean" },
      scope: { type: "string" },
    },
    USAGE,
  );
  const [verb, harness, ...extra] = positionals;
  if (verb !== "install" && verb !== "status" && verb !== "uninstall")
    throw new UsageError(`say install, status or uninstall${verb ? ` (not "${verb}")` : ""}`);
  if (harness !== "claude" && harness !== "codex")
    throw new UsageError(`say claude or codex${harness ? ` (not "${harness}")` : ""}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (values["dry-run"] && verb === "status")
    throw new UsageError("status changes nothing: drop --dry-run");
  const dryRun = values["dry-run"] === true;
  const stateDir = resolve(resolveStateDir(values["state-dir"]));
  // A state directory chosen explicitly goes into the hooks, so they speak to
  // that instance; otherwise they find it as every other command does.
  const explicit = values["state-dir"] !== undefined || Boolean(process.env.CCMSG_STATE_DIR);
  const ctx: PluginContext = {
    stateDir,
    stateDirArgs: explicit ? ["--state-dir", stateDir] : [],
    inv: runningInvocation(),
    env: process.env,
    permissionHoldS: attentionHoldSeconds(configFile(undefined, process.env), harness),
  };
  // The hook route's credential, minted by an install only (status and a
  // dry run read what is there): Claude Code's http hooks carry it, Codex's
  // `attention --hook` reads it from the state directory. Not left to the
  // instance, which mints it only when its HTTP side first answers.
  const writes = verb === "install" && !dryRun;
  if (writes) ensureStateDir(stateDir);
  const token = writes ? loadOrMintHookToken(stateDir) : readHookToken(stateDir);
  if (harness === "claude") {
    // Claude Code reads the URL as written (no variables), so an instance
    // that moved off a taken port is reached again after an install (or
    // its own retargeting, plugin/retarget.ts).
    const url = hookRouteUrl(stateDir, HOOK_PATH, true);
    if (url !== undefined) ctx.httpHook = { url, token: token ?? "<minted at install>" };
  }
  if (values["allow-tools"] && values["no-allow-tools"])
    throw new UsageError("say --allow-tools or --no-allow-tools, not both");
  const scope = values.scope ?? "user";
  if (!(SETTINGS_SCOPES as readonly string[]).includes(scope))
    throw new UsageError(`--scope is user, project or local (not "${scope}")`);
  if (verb === "install") {
    const file = settingsPath(scope as SettingsScope, process.env, process.cwd());
    const allowTools = values["allow-tools"]
      ? true
      : values["no-allow-tools"]
        ? false
        : await askAllowTools(harness, file);
    if (allowTools !== undefined) ctx.allowTools = allowTools;
    ctx.settingsFile = file;
  }
  const ops = HARNESSES[harness];
  if (verb === "status") {
    const status = await ops.status(ctx);
    const instance = await reachable(stateDir);
    print(values, { ...status, instance }, () => statusText(status, instance));
    if (!status.wired) process.exitCode = 2;
    return;
  }
  if (verb === "install" && !dryRun) ensureStateDir(stateDir);
  const outcome = await ops[verb](ctx, dryRun);
  print(values, outcome, () => outcomeText(outcome));
};

/** On a terminal, ask whether ccmsg's own tools may run without a prompt
 * (DR-0055); elsewhere nobody can answer, so nothing changes. */
async function askAllowTools(harness: string, file: string): Promise<boolean | undefined> {
  if (harness !== "claude" || !process.stdin.isTTY || !process.stdout.isTTY) return undefined;
  const lines = [
    "Let sessions run ccmsg's own commands and MCP tools without a permission prompt?",
    `These allow rules would go into ${file}:`,
    ...CLAUDE_ALLOW_RULES.map((r) => `  ${r}`),
    "(uninstall takes out exactly these; --allow-tools / --no-allow-tools answers without asking)",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question("Add them? [y/N] ");
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

interface Reach {
  reachable: boolean;
  detail: string;
}

/** Whether the instance answers; a stopped one is not a fault (a hook starts it). */
async function reachable(stateDir: string): Promise<Reach> {
  const { socket } = stateFiles(stateDir);
  try {
    const client = await Client.connectUnix(socket);
    try {
      const r = await client.call("instance_ping");
      return {
        reachable: true,
        detail: `instance ${r.instance} (ccmsg ${r.version}) at ${socket}`,
      };
    } finally {
      client.close();
    }
  } catch {
    return {
      reachable: false,
      detail: `no instance answers at ${socket} (the first hook starts one; or: ccmsg daemon start)`,
    };
  }
}

function outcomeText(o: Outcome): string {
  const what = o.dry_run ? "would change" : o.action === "install" ? "installed" : "uninstalled";
  const changed = o.changes.filter((c) => c.action !== "unchanged");
  const lines = [
    `ccmsg plugin ${o.action} ${o.harness}: ${what}${changed.length === 0 ? " (nothing to change)" : ""}`,
  ];
  for (const c of o.changes)
    lines.push(`  ${c.action.padEnd(9)} ${c.path}${c.detail ? ` (${c.detail})` : ""}`);
  for (const c of o.commands)
    lines.push(
      `  ${(c.ran ? "ran" : "to run").padEnd(9)} ${c.command}${c.result ? ` — ${c.result}` : ""}`,
    );
  const allow = o.allow_rules;
  if (allow?.unsupported !== undefined) lines.push(`  allow rules: ${allow.unsupported}`);
  else if (allow !== undefined) {
    const would = o.dry_run ? "to be " : "";
    if (allow.added.length === 0 && allow.removed.length === 0)
      lines.push(`  allow rules: nothing ${o.dry_run ? "to change" : "changed"} in ${allow.path}`);
    if (allow.added.length > 0) lines.push(`  allow rules ${would}added to ${allow.path}:`);
    for (const r of allow.added) lines.push(`    + ${r}`);
    if (allow.removed.length > 0) lines.push(`  allow rules ${would}taken out of ${allow.path}:`);
    for (const r of allow.removed) lines.push(`    - ${r}`);
  }
  if (o.needs.length > 0) lines.push("", "Still to do:");
  for (const n of o.needs)
    lines.push(`  - ${n.what}:`, ...n.how.split("\n").map((l) => `      ${l}`));
  return lines.join("\n");
}

function statusText(s: Status, instance: Reach): string {
  const lines = [`${s.harness}: ${s.wired ? "wired" : "not wired (see ✗ below)"}`];
  for (const c of s.checks)
    lines.push(`  ${c.pass ? "✓" : "✗"} ${c.name}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ""}`);
  lines.push(`  ${instance.reachable ? "✓" : "·"} instance: ${instance.detail}`);
  if (s.needs.length > 0) lines.push("", "Still to do:");
  for (const n of s.needs) lines.push(`  - ${n.what}: ${n.how}`);
  return lines.join("\n");
}

/** The attention queue's hold of this harness's prompts in seconds
 * (DR-0062), as the config sets it: its PermissionRequest hook's timeout
 * follows it. A config that does not read gives the default; the instance
 * refuses it on its own. */
function attentionHoldSeconds(path: string, harness: "claude" | "codex"): number {
  let hold: number | undefined;
  try {
    const a = loadConfig(path).attention;
    hold = harness === "codex" ? a?.codex_hold_seconds : a?.hold_seconds;
  } catch {}
  const fallback =
    harness === "codex" ? ATTENTION_CODEX_HOLD_DEFAULT_MS : ATTENTION_HOLD_DEFAULT_MS;
  return hold ?? fallback / 1000;
}
