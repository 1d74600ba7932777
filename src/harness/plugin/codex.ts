import { accessSync, constants, readFileSync } from "node:fs";
import { join } from "node:path";
import { codexConfigHome } from "../../state/paths.js";
import { permissionHookTimeoutS } from "../hook-delivery.js";
import {
  type CodexHook,
  foreignMcpEntry,
  hasCodexBlock,
  hooksDisabled,
  mcpBlock,
  mergeCodexConfig,
  mergeCodexHooks,
  presentCodexHooks,
  unmergeCodexConfig,
  unmergeCodexHooks,
} from "./codex-config.js";
import type { Check } from "./command-line.js";
import { commandCheck, commandLine, onPath, shellWord } from "./command-line.js";
import {
  applyPlan,
  type Desired,
  loadReceipt,
  planInstall,
  planUninstall,
  pruneDirs,
  removeReceipt,
  saveReceipt,
} from "./files.js";
import { type Need, type Outcome, type PluginContext, runTool, type Status } from "./report.js";
import { SKILL_MD } from "./skill.js";

// ccmsg in Codex (harness spec §7): small scripts that run ccmsg as the
// thread, merged into `$CODEX_HOME/hooks.json`; the skill; the MCP server in
// `config.toml`. Hooks point at the scripts rather than at ccmsg itself:
// Codex asks the person to trust each hook definition again when it changes,
// and a script's path stays the same when ccmsg moves.

/** Codex's config home: `CODEX_HOME`, else `~/.codex`. */

const scriptsDir = (stateDir: string) => join(stateDir, "plugins", "codex");
const receiptPath = (stateDir: string) => join(stateDir, "plugins", "codex-receipt.json");

/** Each hook: the Codex event, its script, the ccmsg verb it runs. The
 * installed Codex (0.169) documents SessionEnd (`reason: "other"`) and caps
 * its hooks at a few seconds. */
const HOOKS = [
  {
    event: "SessionStart",
    matcher: "startup|resume|clear",
    name: "session-start",
    verb: "hello",
    timeout: 10,
  },
  {
    event: "UserPromptSubmit",
    name: "user-prompt-submit",
    verb: "inbox",
    timeout: 10,
  },
  // Codex cannot be woken once idle: messages that arrived during a turn keep
  // it going at its end (a Stop hook's `decision: "block"`).
  { event: "Stop", name: "stop", verb: "inbox", timeout: 10 },
  {
    event: "SessionEnd",
    name: "session-end",
    verb: "stopping",
    timeout: 3,
  },
  // The attention queue (DR-0062): the hook asks the instance and waits for
  // the person's answer; its timeout follows the hold (codexHooks).
  {
    event: "PermissionRequest",
    name: "permission-request",
    verb: "attention",
  },
] as const;

const scriptPath = (stateDir: string, name: string) =>
  join(scriptsDir(stateDir), `ccmsg-${name}.sh`);

/** A script that runs ccmsg as the Codex thread. Claude Code's variables are
 * dropped: a Codex started inside Claude Code inherits them, and they would
 * make ccmsg greet Claude's instance as Claude's session. Codex gives a hook
 * no thread variable, so `--harness codex` says whose it is (the payload
 * names the thread), and Codex's stricter reading of a hook's output. */
function script(ctx: PluginContext, home: string, event: string, verb: string): string {
  return [
    "#!/bin/sh",
    `# Codex ${event} hook, written by \`ccmsg plugin install codex\`: runs \`ccmsg ${verb} --hook\`.`,
    "exec /usr/bin/env -u CLAUDE_CONFIG_DIR -u CLAUDE_CODE_SESSION_ID -u CLAUDE_PROJECT_DIR \\",
    `  CODEX_HOME=${shellWord(home)} \\`,
    `  ${commandLine(ctx.inv, [verb, "--hook", "--harness", "codex", ...ctx.stateDirArgs])}`,
    "",
  ].join("\n");
}

function codexHooks(ctx: PluginContext): CodexHook[] {
  return HOOKS.map((h) => ({
    event: h.event,
    ...("matcher" in h ? { matcher: h.matcher } : {}),
    command: shellWord(scriptPath(ctx.stateDir, h.name)),
    timeout: "timeout" in h ? h.timeout : permissionHookTimeoutS(ctx.permissionHoldS),
  }));
}

function block(ctx: PluginContext, home: string): string {
  return mcpBlock(ctx.inv.node, [ctx.inv.script, "mcp", ...ctx.stateDirArgs], { CODEX_HOME: home });
}

export function codexFiles(ctx: PluginContext): Desired[] {
  const home = codexConfigHome(ctx.env);
  const hooksPath = join(home, "hooks.json");
  const ours = codexHooks(ctx);
  const mcp = block(ctx, home);
  return [
    ...HOOKS.map(
      (h): Desired => ({
        path: scriptPath(ctx.stateDir, h.name),
        strategy: "owned",
        mode: 0o755,
        content: () => script(ctx, home, h.event, h.verb),
      }),
    ),
    {
      path: join(home, "skills", "ccmsg", "SKILL.md"),
      strategy: "owned",
      mode: 0o644,
      content: () => SKILL_MD,
    },
    {
      path: hooksPath,
      strategy: "merged",
      mode: 0o644,
      content: (current) => mergeCodexHooks(current, ours, hooksPath),
      unmerge: unmergeCodexHooks,
    },
    {
      path: join(home, "config.toml"),
      strategy: "merged",
      mode: 0o600,
      content: (current) => mergeCodexConfig(current, mcp),
      unmerge: unmergeCodexConfig,
    },
  ];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** What the person still has to do in Codex; ccmsg never writes the trust. */
async function codexNeeds(ctx: PluginContext): Promise<Need[]> {
  const home = codexConfigHome(ctx.env);
  const config = readText(join(home, "config.toml")) ?? "";
  const needs: Need[] = [
    {
      what: "trust ccmsg's hooks: Codex skips hooks nobody has reviewed",
      how: `in Codex run /hooks and trust the ccmsg hooks (${HOOKS.map((h) => h.event).join(", ")}); once per definition`,
    },
  ];
  const exe = onPath("codex", ctx.env);
  let disabled = hooksDisabled(config);
  if (!disabled && exe !== undefined) {
    const r = await runTool(exe, ["features", "list"], ctx.env, 10_000);
    // `codex features list`: one row per feature, "<name> <stage> <enabled>".
    disabled = r.stdout.split("\n").some((row) => {
      const words = row.trim().split(/\s+/);
      return words[0] === "hooks" && words.at(-1) === "false";
    });
  }
  if (disabled)
    needs.push({
      what: "turn Codex's hooks feature on",
      how: `set hooks = true under [features] in ${join(home, "config.toml")}`,
    });
  if (exe === undefined)
    needs.push({
      what: "codex is not on PATH, so its hooks feature could not be checked",
      how: "releases before hooks were on by default need hooks = true under [features] in config.toml",
    });
  if (foreignMcpEntry(config))
    needs.push({
      what: "config.toml already defines mcp_servers.ccmsg, so ccmsg left it alone",
      how: `to use ccmsg's entry, remove yours from ${join(home, "config.toml")} and install again`,
    });
  return needs;
}

export async function installCodex(ctx: PluginContext, dryRun: boolean): Promise<Outcome> {
  const previous = loadReceipt(receiptPath(ctx.stateDir));
  const { plan, receipt } = planInstall("codex", codexFiles(ctx), previous);
  if (!dryRun) {
    applyPlan(plan);
    saveReceipt(receiptPath(ctx.stateDir), receipt);
  }
  return {
    harness: "codex",
    action: "install",
    dry_run: dryRun,
    changes: plan.changes,
    commands: [],
    needs: await codexNeeds(ctx),
    // No equivalent verified against the Codex here (DR-0055): nothing is
    // written, and the person is told so.
    ...(ctx.allowTools === true
      ? {
          allow_rules: {
            path: "",
            added: [],
            removed: [],
            unsupported:
              "not added for Codex: no allow rule for ccmsg's commands and MCP tools has been verified in its config; Codex keeps asking as its approval policy says",
          },
        }
      : {}),
  };
}

export async function uninstallCodex(ctx: PluginContext, dryRun: boolean): Promise<Outcome> {
  const receipt = loadReceipt(receiptPath(ctx.stateDir));
  const plan = receipt ? planUninstall(receipt, codexFiles(ctx)) : undefined;
  if (!dryRun && plan) {
    applyPlan(plan);
    removeReceipt(receiptPath(ctx.stateDir));
    pruneDirs([...plan.rmdirs, join(ctx.stateDir, "plugins")]);
  }
  return {
    harness: "codex",
    action: "uninstall",
    dry_run: dryRun,
    changes: plan?.changes ?? [],
    commands: [],
    needs: [],
  };
}

export async function codexStatus(ctx: PluginContext): Promise<Status> {
  const home = codexConfigHome(ctx.env);
  const reinstall = "ccmsg plugin install codex";
  const checks: Check[] = [];
  const lines: string[] = [];
  for (const d of codexFiles(ctx)) {
    const current = readText(d.path);
    const name = d.path.startsWith(home) ? d.path.slice(home.length + 1) : d.path;
    if (d.strategy === "owned") {
      const pass = current !== undefined && current === d.content(current) && runnable(d);
      if (current !== undefined && d.mode === 0o755)
        lines.push(current.trim().split("\n").pop()!.trim());
      checks.push({
        name,
        pass,
        detail:
          current === undefined
            ? `missing: ${d.path}`
            : pass
              ? "present"
              : "differs from what this ccmsg writes, or is not executable",
        ...(pass ? {} : { fix: reinstall }),
      });
    }
  }
  const hooksPath = join(home, "hooks.json");
  const ours = codexHooks(ctx);
  const present = presentCodexHooks(readText(hooksPath), ours);
  const absent = ours.filter((h) => !present.includes(h)).map((h) => h.event);
  checks.push({
    name: "hooks.json",
    pass: absent.length === 0,
    detail:
      absent.length === 0
        ? `ccmsg's ${ours.map((h) => h.event).join(", ")} hooks`
        : `${hooksPath} lacks ccmsg's ${absent.join(", ")} hook(s) (or is not valid JSON)`,
    ...(absent.length === 0 ? {} : { fix: reinstall }),
  });
  if (lines.length > 0) checks.push(commandCheck(lines, scriptsDir(ctx.stateDir)));
  const config = readText(join(home, "config.toml"));
  const mcp = hasCodexBlock(config, block(ctx, home));
  checks.push({
    name: "config.toml",
    pass: mcp,
    detail: mcp
      ? "[mcp_servers.ccmsg] runs ccmsg mcp"
      : foreignMcpEntry(config ?? "")
        ? "mcp_servers.ccmsg is the person's own entry, not ccmsg's"
        : "no [mcp_servers.ccmsg] from ccmsg",
    ...(mcp ? {} : { fix: reinstall }),
  });
  return {
    harness: "codex",
    wired: checks.every((c) => c.pass),
    checks,
    needs: await codexNeeds(ctx),
  };
}

function runnable(d: Desired): boolean {
  if (d.mode !== 0o755) return true;
  try {
    accessSync(d.path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
