import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDirectDelivery } from "../../src/contract/direct-delivery.js";
import {
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { newSid } from "../helpers/peer.js";

// `ccmsg plugin install|status|uninstall claude|codex` (issue 9, item 5), run
// as a person runs it, into temp config homes. Claude Code's CLI is a fake
// that records its arguments and keeps what was registered; the generated
// files are checked against the shapes Claude Code and Codex document
// (harness spec §2.1, §3.1, §7.1, §7.2).

/** Hook payloads copied from shared/fixtures (the shapes the harnesses send). */
const HOOK_FIXTURES = join(ROOT, "test", "fixtures");

/** A fake `claude`: logs argv (one JSON line per call) and answers the
 * plugin subcommands ccmsg uses from a small state file. */
const FAKE_CLAUDE = `#!${process.execPath}
const fs = require("node:fs");
const log = process.env.FAKE_CLAUDE_LOG, file = process.env.FAKE_CLAUDE_STATE;
const argv = process.argv.slice(2);
fs.appendFileSync(log, JSON.stringify(argv) + "\\n");
let s = { marketplaces: [], plugins: [] };
try { s = JSON.parse(fs.readFileSync(file, "utf8")); } catch {}
const a = argv.filter((x) => x !== "--json");
const out = (v) => process.stdout.write(JSON.stringify(v) + "\\n");
const is = (...w) => w.every((x, i) => a[i] === x);
if (is("plugin", "marketplace", "list")) out(s.marketplaces);
else if (is("plugin", "list")) process.stdout.write(JSON.stringify(s.plugins, null, 2));
else if (is("plugin", "marketplace", "add")) {
  const m = JSON.parse(fs.readFileSync(a[3] + "/.claude-plugin/marketplace.json", "utf8"));
  s.marketplaces.push({ name: m.name, source: "directory", path: a[3], installLocation: a[3] });
  out({ outcome: "ok", message: "added " + m.name });
} else if (is("plugin", "marketplace", "remove")) {
  s.marketplaces = s.marketplaces.filter((m) => m.name !== a[3]);
  out({ outcome: "ok", message: "removed" });
} else if (is("plugin", "install")) {
  s.plugins.push({ id: a[2], enabled: true });
  out({ outcome: "ok", message: "installed" });
} else if (is("plugin", "uninstall")) {
  s.plugins = s.plugins.filter((p) => p.id !== a[2]);
  out({ outcome: "ok", message: "uninstalled" });
} else { process.stderr.write("fake claude: unknown " + a.join(" ") + "\\n"); process.exit(1); }
fs.writeFileSync(file, JSON.stringify(s));
`;

interface Setup {
  env: Record<string, string>;
  root: string;
  stateDir: string;
  codexHome: string;
  pluginDir: string;
  calls(): string[][];
}

function setup(options: { claude?: boolean; stateDir?: string } = {}): Setup {
  const { root, env } = isolatedHome();
  const bin = join(root, "bin");
  mkdirSync(bin);
  if (options.claude !== false) {
    writeFileSync(join(bin, "claude"), FAKE_CLAUDE);
    chmodSync(join(bin, "claude"), 0o755);
  }
  const stateDir = options.stateDir ?? join(root, "ccmsg-state");
  const codexHome = join(root, "codex");
  mkdirSync(codexHome);
  const log = join(root, "claude-calls.jsonl");
  return {
    root,
    stateDir,
    codexHome,
    pluginDir: join(stateDir, "plugins", "claude"),
    env: {
      ...env,
      PATH: `${bin}:/usr/bin:/bin`,
      CCMSG_STATE_DIR: stateDir,
      CODEX_HOME: codexHome,
      FAKE_CLAUDE_LOG: log,
      FAKE_CLAUDE_STATE: join(root, "claude-state.json"),
    },
    calls: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as string[])
        : [],
  };
}

const plugin = (s: Setup, ...args: string[]) => runCli(["plugin", ...args], s.env);
/** Parsed JSON under test: its shape is what the test checks. */
// biome-ignore lint/suspicious/noExplicitAny: the tests check the shape themselves
type J = any;

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, J>;

/** Every file under `dir` with its bytes, to compare whole trees. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(e.parentPath, e.name);
    if (e.isFile()) out[path] = readFileSync(path).toString("base64");
  }
  return out;
}

// --- documented shapes ---------------------------------------------------

/** A hooks file (§2.1 / §7.1): event → matcher groups → command handlers
 * whose timeout is whole seconds. */
function checkHooksShape(file: J): string[] {
  const problems: string[] = [];
  if (typeof file?.hooks !== "object") return ["no hooks object"];
  for (const [event, groups] of Object.entries<J>(file.hooks)) {
    if (!Array.isArray(groups)) problems.push(`${event}: not a list of groups`);
    for (const g of groups) {
      if (g.matcher !== undefined && typeof g.matcher !== "string")
        problems.push(`${event}: matcher not a string`);
      if (!Array.isArray(g.hooks) || g.hooks.length === 0)
        problems.push(`${event}: a group without handlers`);
      for (const h of g.hooks ?? []) {
        if (h.type === "http") {
          if (typeof h.url !== "string" || !/^http:\/\/127\.0\.0\.1:\d+\//.test(h.url))
            problems.push(`${event}: http hook to ${h.url}, not loopback`);
        } else if (h.type !== "command") problems.push(`${event}: type ${h.type}`);
        else if (typeof h.command !== "string" || h.command === "")
          problems.push(`${event}: no command`);
        if (h.timeout !== undefined && !(Number.isInteger(h.timeout) && h.timeout > 0))
          problems.push(`${event}: timeout ${h.timeout} is not whole seconds`);
        for (const k of ["async", "asyncRewake"])
          if (h[k] !== undefined && typeof h[k] !== "boolean") problems.push(`${event}: ${k}`);
      }
    }
  }
  return problems;
}

/** The node and ccmsg a generated command line runs (both absolute). */
function invocation(command: string): { node: string; script: string; args: string[] } {
  const words = [...command.matchAll(/'((?:[^']|'\\'')*)'/g)].map((m) => m[1]!);
  return { node: words[0]!, script: words[1]!, args: words.slice(2) };
}

function handlers(file: J, event: string): J[] {
  return (file.hooks[event] ?? []).flatMap((g: J) => g.hooks);
}

function runHook(
  command: string,
  payload: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // PATH leads nowhere: the hook must find node and ccmsg by itself.
    const child = spawn("/bin/sh", ["-c", command], {
      env: { ...env, PATH: "/nonexistent" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdin.end(payload);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

// --- Claude Code ---------------------------------------------------------

describe("ccmsg plugin … claude", () => {
  it("generates the plugin in the documented layout and registers it through claude", async () => {
    const s = setup();
    const r = await plugin(s, "install", "claude", "--json");
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.changes.map((c: J) => c.action)).toEqual(Array(5).fill("create"));

    const market = readJson(join(s.pluginDir, ".claude-plugin", "marketplace.json"));
    expect(market.name).toBe("ccmsg");
    expect(typeof market.owner?.name).toBe("string");
    expect(market.plugins).toEqual([expect.objectContaining({ name: "ccmsg", source: "./" })]);
    const manifest = readJson(join(s.pluginDir, ".claude-plugin", "plugin.json"));
    expect(manifest.name).toBe("ccmsg");
    // hooks/hooks.json is loaded by itself; naming it in plugin.json doubles every hook.
    expect(manifest.hooks).toBeUndefined();

    const hooks = readJson(join(s.pluginDir, "hooks", "hooks.json"));
    expect(checkHooksShape(hooks)).toEqual([]);
    const verbs = (event: string) =>
      handlers(hooks, event).map((h) => invocation(h.command).args.slice(0, 2).join(" "));
    expect(verbs("SessionStart").sort()).toEqual(["hello --hook", "wait --hook"]);
    expect(verbs("Stop")).toEqual(["wait --hook"]);
    expect(verbs("SessionEnd")).toEqual(["stopping --hook"]);
    // The hot hooks are http hooks to the instance's hook route with its
    // hook-only token (DR-0058); the file holding it is the person's alone.
    const token = readFileSync(join(s.stateDir, "hook-token"), "utf8").trim();
    const http = {
      type: "http",
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/claude$/),
      headers: { Authorization: `Bearer ${token}` },
    };
    expect(handlers(hooks, "UserPromptSubmit")).toEqual([expect.objectContaining(http)]);
    expect(statSync(join(s.pluginDir, "hooks", "hooks.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(s.stateDir, "hook-token")).mode & 0o777).toBe(0o600);
    // File reservations: a sync PreToolUse hook on the tools that change files.
    expect(hooks.hooks.PreToolUse).toEqual([
      expect.objectContaining({ matcher: "Edit|Write|MultiEdit|NotebookEdit" }),
    ]);
    expect(handlers(hooks, "PreToolUse")).toEqual([expect.objectContaining(http)]);
    // Every permission dialog is asked of the attention queue (DR-0062),
    // held past the instance's default hold of 600 s.
    expect(hooks.hooks.PermissionRequest).toEqual([expect.objectContaining({ matcher: "*" })]);
    expect(handlers(hooks, "PermissionRequest")).toEqual([{ ...http, timeout: 630 }]);
    const waiters = [...handlers(hooks, "SessionStart"), ...handlers(hooks, "Stop")].filter((h) =>
      h.command.includes("'wait'"),
    );
    for (const w of waiters) expect(w).toMatchObject({ async: true, asyncRewake: true });
    for (const h of ["SessionStart", "SessionEnd", "Stop"].flatMap((e) => handlers(hooks, e))) {
      const inv = invocation(h.command);
      expect(inv.node).toBe(process.execPath);
      expect(existsSync(inv.script)).toBe(true);
      // The hooks speak to the instance the state directory names.
      expect(inv.args.slice(-2)).toEqual(["--state-dir", s.stateDir]);
    }
    // A matcher on Stop or UserPromptSubmit is ignored by Claude Code: none is written.
    expect(hooks.hooks.Stop[0].matcher).toBeUndefined();
    expect(hooks.hooks.UserPromptSubmit[0].matcher).toBeUndefined();

    const mcp = readJson(join(s.pluginDir, ".mcp.json"));
    expect(mcp.ccmsg).toMatchObject({ type: "stdio", command: process.execPath });
    expect(mcp.ccmsg.args.slice(1, 2)).toEqual(["mcp"]);

    const skill = readFileSync(join(s.pluginDir, "skills", "ccmsg", "SKILL.md"), "utf8");
    expect(skill).toMatch(/^---\nname: ccmsg\ndescription: .+\n---\n/);
    for (const taught of [
      "<cross-session-message",
      "Reply with: ccmsg reply <mid> --to <sid>",
      "without** `--to`",
      "ccmsg post <sid>",
      "ccmsg peers",
      "ccmsg notify",
      "ccmsg stopping --reason",
      "ccmsg reserve ",
      "ccmsg release --all",
      "ccmsg dump <sid> --preset howto",
    ])
      expect(skill).toContain(taught);

    expect(s.calls()).toContainEqual(["plugin", "marketplace", "add", s.pluginDir, "--json"]);
    expect(s.calls()).toContainEqual(["plugin", "install", "ccmsg@ccmsg", "--json"]);
  });

  it("the permission hooks' timeouts follow each harness's configured hold", async () => {
    const s = setup();
    mkdirSync(join(s.env.XDG_CONFIG_HOME!, "ccmsg"), { recursive: true });
    writeFileSync(
      join(s.env.XDG_CONFIG_HOME!, "ccmsg", "config.json"),
      JSON.stringify({ attention: { hold_seconds: 120, codex_hold_seconds: 45 } }),
    );
    expect((await plugin(s, "install", "claude")).code).toBe(0);
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const claude = readJson(join(s.pluginDir, "hooks", "hooks.json"));
    const codex = readJson(join(s.codexHome, "hooks.json"));
    expect(handlers(claude, "PermissionRequest").map((h) => h.timeout)).toEqual([150]);
    expect(handlers(codex, "PermissionRequest").map((h) => h.timeout)).toEqual([75]);
  });

  it("changes nothing on a second install, and registers nothing twice", async () => {
    const s = setup();
    expect((await plugin(s, "install", "claude")).code).toBe(0);
    const before = tree(s.stateDir);
    const mtimes = Object.keys(before).map((p) => statSync(p).mtimeMs);
    const calls = s.calls().length;
    const r = await plugin(s, "install", "claude", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).changes.every((c: J) => c.action === "unchanged")).toBe(true);
    expect(tree(s.stateDir)).toEqual(before);
    expect(Object.keys(before).map((p) => statSync(p).mtimeMs)).toEqual(mtimes);
    // Only the two read-only list calls.
    expect(
      s
        .calls()
        .slice(calls)
        .map((c) => c.slice(0, 3).join(" ")),
    ).toEqual(["plugin marketplace list", "plugin list --json"]);
  });

  it("prints the exact claude commands when claude is not on PATH", async () => {
    const s = setup({ claude: false });
    const r = await plugin(s, "install", "claude", "--text");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`claude plugin marketplace add ${s.pluginDir}`);
    expect(r.stdout).toContain("claude plugin install ccmsg@ccmsg");
    const status = await plugin(s, "status", "claude", "--json");
    expect(status.code).toBe(2);
    const registered = JSON.parse(status.stdout).checks.find((c: J) => c.name === "registered");
    expect(registered.pass).toBe(false);
  });

  it("status says wired, then broken once a file is removed", async () => {
    const s = setup();
    await plugin(s, "install", "claude");
    const ok = await plugin(s, "status", "claude", "--json");
    expect(ok.code, ok.stdout).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ harness: "claude", wired: true });

    rmSync(join(s.pluginDir, "hooks", "hooks.json"));
    const broken = await plugin(s, "status", "claude", "--json");
    expect(broken.code).toBe(2);
    const report = JSON.parse(broken.stdout);
    expect(report.wired).toBe(false);
    expect(report.checks.find((c: J) => c.name === "hooks/hooks.json")).toMatchObject({
      pass: false,
      fix: "ccmsg plugin install claude",
    });
    const text = await plugin(s, "status", "claude", "--text");
    expect(text.stdout).toMatch(/✗ hooks\/hooks\.json: missing/);
  });

  it("uninstall unregisters the plugin and removes every file it wrote", async () => {
    const s = setup();
    await plugin(s, "install", "claude");
    const r = await plugin(s, "uninstall", "claude", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(s.calls()).toContainEqual(["plugin", "uninstall", "ccmsg@ccmsg", "--json"]);
    expect(s.calls()).toContainEqual(["plugin", "marketplace", "remove", "ccmsg", "--json"]);
    expect(existsSync(join(s.stateDir, "plugins"))).toBe(false);
  });

  it("--dry-run lists the changes and writes nothing", async () => {
    const s = setup();
    const r = await plugin(s, "install", "claude", "--dry-run", "--json");
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.dry_run).toBe(true);
    expect(out.changes).toHaveLength(5);
    expect(out.commands.every((c: J) => c.ran === false)).toBe(true);
    expect(existsSync(s.stateDir)).toBe(false);
    expect(s.calls().map((c) => c[1])).not.toContain("install");
  });

  it("refuses a verb or harness it does not know", async () => {
    const s = setup();
    const r = await plugin(s, "install", "gemini", "--json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error.code).toBe("invalid_args");
  });
});

// --- the hooks run the installed ccmsg ------------------------------------

describe("generated hooks reach the instance without PATH", () => {
  let inst: TestInstance;
  beforeAll(async () => {
    inst = await startInstance();
  });
  afterAll(async () => {
    await inst.stop();
  });

  it("Claude Code's SessionStart and Codex's session-start script greet as the payload's session", async () => {
    const s = setup({ stateDir: inst.stateDir });
    expect((await plugin(s, "install", "claude")).code).toBe(0);
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const hooks = readJson(join(s.pluginDir, "hooks", "hooks.json"));
    const hello = handlers(hooks, "SessionStart").find((h) => h.command.includes("'hello'"));
    const claudePayload = readFileSync(
      join(HOOK_FIXTURES, "claude-code", "hooks", "session-start.json"),
      "utf8",
    );
    const a = await runHook(hello.command, claudePayload, s.env);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({
      greeted: true,
      sid: JSON.parse(claudePayload).session_id,
    });

    const codexHooks = readJson(join(s.codexHome, "hooks.json"));
    const start = codexHooks.hooks.SessionStart[0].hooks[0].command;
    const codexPayload = readFileSync(
      join(HOOK_FIXTURES, "codex", "hooks", "session-start.json"),
      "utf8",
    );
    const b = await runHook(start, codexPayload, s.env);
    expect(b.code).toBe(0);
    // Nothing on stdout: Codex fails a hook whose JSON is not its own shape.
    expect(b.stdout).toBe("");
    expect(JSON.parse(b.stderr)).toMatchObject({
      greeted: true,
      sid: JSON.parse(codexPayload).session_id,
    });
  });

  it("Codex's permission-request script waits in the attention queue and prints the person's answer", async () => {
    const s = setup({ stateDir: inst.stateDir });
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const hook = handlers(readJson(join(s.codexHome, "hooks.json")), "PermissionRequest")[0];
    // Codex's payload: its common fields, the Bash tool and its command.
    const payload = readFileSync(
      join(HOOK_FIXTURES, "codex", "hooks", "permission-request.json"),
      "utf8",
    );
    const answered = runHook(hook.command, payload, s.env);
    const queue = async () => JSON.parse((await runCli(["attention", "--json"], s.env)).stdout);
    let items: J[] = [];
    for (let i = 0; i < 100 && items.length === 0; i++) {
      items = (await queue()).items;
      if (items.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(items).toEqual([
      expect.objectContaining({
        harness: "codex",
        tool: "Bash",
        sid: JSON.parse(payload).session_id,
        input: expect.stringContaining("npm publish --dry-run"),
      }),
    ]);
    const deny = await runCli(
      ["attention", "deny", String(items[0].id), "--message", "not from this branch"],
      s.env,
    );
    expect(deny.code, deny.stderr).toBe(0);
    const a = await answered;
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "not from this branch" },
      },
    });
    expect((await queue()).items).toEqual([]);
  });

  it("a prompt typed at Codex's terminal lets its next permission prompt go to its dialog at once; a message ccmsg put in does not", async () => {
    const s = setup({ stateDir: inst.stateDir });
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const codexHooks = readJson(join(s.codexHome, "hooks.json"));
    const [submit] = handlers(codexHooks, "UserPromptSubmit");
    const [permission] = handlers(codexHooks, "PermissionRequest");
    const fixture = (name: string) =>
      JSON.parse(readFileSync(join(HOOK_FIXTURES, "codex", "hooks", name), "utf8"));
    const sid = newSid();
    const ask = JSON.stringify({ ...fixture("permission-request.json"), session_id: sid });
    const queue = async () =>
      (
        JSON.parse((await runCli(["attention", "--all", "--json"], s.env)).stdout).items as J[]
      ).filter((i) => i.sid === sid);
    const prompt = (text: string) =>
      runHook(
        submit.command,
        JSON.stringify({ ...fixture("user-prompt-submit.json"), session_id: sid, prompt: text }),
        s.env,
      );

    // A message ccmsg put in as a prompt (the contract's rendering, as `codex
    // queue` submits it) is not the person at the terminal: the permission
    // prompt that follows is held for a decision.
    const delivered = renderDirectDelivery({
      mid: "0123456789abcdef0123456789abcdef/1",
      from: newSid(),
      from_label: "api/main",
      text: "rebase onto main",
    });
    expect((await prompt(delivered)).code).toBe(0);
    const held = runHook(permission.command, ask, s.env);
    let items: J[] = [];
    for (let i = 0; i < 100 && items.length === 0; i++) {
      items = await queue();
      if (items.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(items[0]).toMatchObject({ harness: "codex" });
    expect(items[0]!.end).toBeUndefined();
    expect((await runCli(["attention", "deny", String(items[0]!.id)], s.env)).code).toBe(0);
    expect(JSON.parse((await held).stdout)).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "deny" } },
    });

    // Typed by the person: Codex's dialog comes at once, and the queue says why.
    expect((await prompt("publish a dry run of the package")).code).toBe(0);
    const direct = await runHook(permission.command, ask, s.env);
    expect(direct).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await queue()).map((i) => i.end)).toEqual(["at_terminal", "denied"]);
  });

  it("the permission hook leaves the harness's dialog when no instance answers", async () => {
    const s = setup();
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const hook = handlers(readJson(join(s.codexHome, "hooks.json")), "PermissionRequest")[0];
    const payload = readFileSync(
      join(HOOK_FIXTURES, "codex", "hooks", "permission-request.json"),
      "utf8",
    );
    const a = await runHook(hook.command, payload, s.env);
    expect(a).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

// --- Codex ---------------------------------------------------------------

const USER_HOOKS = `{
    "hooks": {
        "Stop": [
            { "hooks": [ { "type": "command", "command": "say done", "timeout": 5 } ] }
        ]
    }
}
`;
const USER_CONFIG = `# my Codex settings
model = "gpt-5-codex"   # the one I like

[features]
web_search = true

[mcp_servers.docs]
command = "docs-mcp"
`;

describe("ccmsg plugin … codex", () => {
  function withUserFiles(): Setup {
    const s = setup();
    writeFileSync(join(s.codexHome, "hooks.json"), USER_HOOKS);
    writeFileSync(join(s.codexHome, "config.toml"), USER_CONFIG, { mode: 0o640 });
    return s;
  }

  it("merges one entry per event into hooks.json, keeps the person's, and adds the skill and MCP server", async () => {
    const s = withUserFiles();
    const r = await plugin(s, "install", "codex", "--json");
    expect(r.code, r.stderr).toBe(0);
    const hooks = readJson(join(s.codexHome, "hooks.json"));
    expect(checkHooksShape(hooks)).toEqual([]);
    // The person's Stop hook stays, beside ccmsg's.
    expect(hooks.hooks.Stop.slice(0, -1)).toEqual(JSON.parse(USER_HOOKS).hooks.Stop);
    for (const event of [
      "SessionStart",
      "UserPromptSubmit",
      "Stop",
      "SessionEnd",
      "PermissionRequest",
    ])
      expect(handlers(hooks, event).filter((h) => h.command.includes("ccmsg-"))).toHaveLength(1);
    // The attention queue's hook waits for the person: Codex's hold 60 s + 30
    // (Codex draws its dialog only once the hook has left it).
    const ask = handlers(hooks, "PermissionRequest")[0];
    expect(ask.timeout).toBe(90);
    const askScript = readFileSync(JSON.parse(ask.command.replace(/'/g, '"')), "utf8");
    expect(askScript).toContain("'attention' '--hook' '--harness' 'codex'");
    expect(hooks.hooks.SessionStart[0].matcher).toBe("startup|resume|clear");
    // The person's indentation is kept.
    expect(readFileSync(join(s.codexHome, "hooks.json"), "utf8")).toMatch(/^\{\n {4}"hooks"/);

    const script = JSON.parse(handlers(hooks, "SessionStart")[0].command.replace(/'/g, '"'));
    const text = readFileSync(script, "utf8");
    expect(statSync(script).mode & 0o111).not.toBe(0);
    expect(text).toMatch(/^#!\/bin\/sh\n/);
    expect(text).toContain("-u CLAUDE_CONFIG_DIR -u CLAUDE_CODE_SESSION_ID -u CLAUDE_PROJECT_DIR");
    expect(text).toContain(`CODEX_HOME='${s.codexHome}'`);
    expect(text).toContain("'hello' '--hook'");

    const config = readFileSync(join(s.codexHome, "config.toml"), "utf8");
    expect(config.startsWith(USER_CONFIG)).toBe(true);
    expect(config).toContain("[mcp_servers.ccmsg]");
    expect(config).toContain(`command = ${JSON.stringify(process.execPath)}`);
    expect(statSync(join(s.codexHome, "config.toml")).mode & 0o777).toBe(0o640);
    expect(existsSync(join(s.codexHome, "skills", "ccmsg", "SKILL.md"))).toBe(true);

    // The permission hook's credential, there before any instance answers
    // HTTP (an instance mints it only when its HTTP side first loads).
    expect(statSync(join(s.stateDir, "hook-token")).mode & 0o777).toBe(0o600);

    const out = JSON.parse(r.stdout);
    expect(out.needs.map((n: J) => n.what).join("\n")).toMatch(/trust ccmsg's hooks/);
  });

  it("changes nothing on a second install, and uninstall restores the person's files byte for byte", async () => {
    const s = withUserFiles();
    await plugin(s, "install", "codex");
    const installed = { ...tree(s.codexHome), ...tree(s.stateDir) };
    const again = await plugin(s, "install", "codex", "--json");
    expect(JSON.parse(again.stdout).changes.every((c: J) => c.action === "unchanged")).toBe(true);
    expect({ ...tree(s.codexHome), ...tree(s.stateDir) }).toEqual(installed);

    const r = await plugin(s, "uninstall", "codex", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(s.codexHome, "hooks.json"), "utf8")).toBe(USER_HOOKS);
    expect(readFileSync(join(s.codexHome, "config.toml"), "utf8")).toBe(USER_CONFIG);
    expect(statSync(join(s.codexHome, "config.toml")).mode & 0o777).toBe(0o640);
    expect(existsSync(join(s.codexHome, "skills"))).toBe(false);
    expect(existsSync(join(s.stateDir, "plugins"))).toBe(false);
  });

  it("uninstall after the person edited the files takes out only ccmsg's part", async () => {
    const s = withUserFiles();
    await plugin(s, "install", "codex");
    const hooksPath = join(s.codexHome, "hooks.json");
    const edited = readJson(hooksPath);
    edited.hooks.PreToolUse = [{ matcher: "Bash", hooks: [{ type: "command", command: "audit" }] }];
    writeFileSync(hooksPath, JSON.stringify(edited, null, 4));
    const configPath = join(s.codexHome, "config.toml");
    writeFileSync(
      configPath,
      `${readFileSync(configPath, "utf8")}\n[profiles.fast]\nmodel = "o4-mini"\n`,
    );

    expect((await plugin(s, "uninstall", "codex")).code).toBe(0);
    const left = readJson(hooksPath);
    expect(Object.keys(left.hooks).sort()).toEqual(["PreToolUse", "Stop"]);
    const config = readFileSync(configPath, "utf8");
    expect(config).not.toContain("ccmsg");
    expect(config).toContain(USER_CONFIG);
    expect(config).toContain('[profiles.fast]\nmodel = "o4-mini"');
  });

  it("keeps the tables Codex writes after ccmsg's own (trust from /hooks, codex mcp add)", async () => {
    const s = withUserFiles();
    await plugin(s, "install", "codex");
    const configPath = join(s.codexHome, "config.toml");
    // As codex-cli 0.169.0 rewrote it when the hooks were trusted and another
    // server added: its tables go after the last one, before ccmsg's end line.
    const codexTables = [
      "[hooks.state]",
      "",
      `[hooks.state."${join(s.codexHome, "hooks.json")}:stop:0:0"]`,
      'trusted_hash = "sha256:f0f0b6d83a088177cadb3adb365558256ab658cabb5ed817b03e92226dc1e1a9"',
      "",
      "[mcp_servers.other]",
      'command = "other-mcp"',
    ].join("\n");
    const installed = readFileSync(configPath, "utf8");
    writeFileSync(
      configPath,
      installed.replace("\n# <<< ccmsg", `\n\n${codexTables}\n# <<< ccmsg`),
    );

    // Installing again puts ccmsg's block back together and keeps Codex's.
    expect((await plugin(s, "install", "codex")).code).toBe(0);
    const again = readFileSync(configPath, "utf8");
    expect(again).toContain(installed.trimEnd());
    expect(again).toContain(codexTables);
    expect(again.match(/# <<< ccmsg/g)).toHaveLength(1);

    expect((await plugin(s, "uninstall", "codex")).code).toBe(0);
    const left = readFileSync(configPath, "utf8");
    expect(left).toBe(`${USER_CONFIG}\n${codexTables}\n`);
  });

  it("leaves the person's own [mcp_servers.ccmsg] alone and says so", async () => {
    const s = setup();
    const own = `[mcp_servers.ccmsg]\ncommand = "my-ccmsg"\n`;
    writeFileSync(join(s.codexHome, "config.toml"), own);
    const r = await plugin(s, "install", "codex", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(s.codexHome, "config.toml"), "utf8")).toBe(own);
    expect(
      JSON.parse(r.stdout)
        .needs.map((n: J) => n.what)
        .join("\n"),
    ).toContain("already defines mcp_servers.ccmsg");
  });

  it("refuses a hooks.json it cannot read, and writes nothing", async () => {
    const s = setup();
    writeFileSync(join(s.codexHome, "hooks.json"), "{ not json");
    writeFileSync(join(s.codexHome, "config.toml"), USER_CONFIG);
    const r = await plugin(s, "install", "codex", "--json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: "invalid_args" });
    expect(readFileSync(join(s.codexHome, "config.toml"), "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(s.stateDir, "plugins"))).toBe(false);
  });

  it("status reports a removed script as broken", async () => {
    const s = withUserFiles();
    await plugin(s, "install", "codex");
    expect((await plugin(s, "status", "codex")).code).toBe(0);
    rmSync(join(s.stateDir, "plugins", "codex", "ccmsg-session-end.sh"));
    const r = await plugin(s, "status", "codex", "--json");
    expect(r.code).toBe(2);
    const failed = JSON.parse(r.stdout).checks.filter((c: J) => !c.pass);
    expect(failed.map((c: J) => c.detail).join("\n")).toContain("ccmsg-session-end.sh");
  });

  it("asks for the hooks feature only when the installed Codex has it off", async () => {
    for (const hooksOn of [true, false]) {
      const s = setup();
      const bin = join(s.root, "bin");
      // `codex features list` rows: name, stage, enabled.
      const rows = [
        "apps                  stable             true",
        `hooks                 stable             ${hooksOn}`,
        "plugin_hooks          removed            false",
      ].join("\\n");
      writeFileSync(join(bin, "codex"), `#!/bin/sh\nprintf '${rows}\\n'\n`);
      chmodSync(join(bin, "codex"), 0o755);
      const r = await plugin(s, "install", "codex", "--json");
      const needs = JSON.parse(r.stdout).needs.map((n: J) => n.what);
      expect(needs.some((w: string) => w.includes("hooks feature on"))).toBe(!hooksOn);
      expect(needs.some((w: string) => w.includes("not on PATH"))).toBe(false);
    }
  });
});

// --- allow rules for ccmsg's own tools (DR-0055) -------------------------

describe("ccmsg plugin install claude --allow-tools", () => {
  const ours = [
    "Bash(ccmsg post:*)",
    "Bash(ccmsg reply:*)",
    "Bash(ccmsg peers:*)",
    "Bash(ccmsg notify:*)",
    "Bash(ccmsg dump:*)",
    "Bash(ccmsg reserve:*)",
    "Bash(ccmsg release:*)",
    "Bash(ccmsg stopping:*)",
    "mcp__plugin_ccmsg_ccmsg",
  ];
  const settingsOf = (s: Setup) => join(s.env.CLAUDE_CONFIG_DIR!, "settings.json");

  it("says exactly which rules it adds, and uninstall takes out exactly those, never the person's", async () => {
    const s = setup();
    const settings = settingsOf(s);
    // The person's own settings, one of ccmsg's rules among them already.
    writeFileSync(
      settings,
      JSON.stringify({
        model: "opus",
        permissions: { allow: ["Bash(npm test:*)", "Bash(ccmsg post:*)"], deny: ["Bash(rm:*)"] },
      }),
    );
    const r = await plugin(s, "install", "claude", "--allow-tools", "--text");
    expect(r.code, r.stderr).toBe(0);
    const added = ours.filter((x) => x !== "Bash(ccmsg post:*)");
    expect(r.stdout).toContain(
      [`  allow rules added to ${settings}:`, ...added.map((x) => `    + ${x}`)].join("\n"),
    );
    expect(readJson(settings)).toEqual({
      model: "opus",
      permissions: {
        allow: ["Bash(npm test:*)", "Bash(ccmsg post:*)", ...added],
        deny: ["Bash(rm:*)"],
      },
    });

    // A second install adds nothing; the person adds a rule of their own.
    const again = await plugin(s, "install", "claude", "--allow-tools", "--json");
    expect(JSON.parse(again.stdout).allow_rules).toEqual({
      path: settings,
      added: [],
      removed: [],
    });
    const edited = readJson(settings);
    edited.permissions.allow.push("Bash(git status:*)");
    writeFileSync(settings, JSON.stringify(edited));

    const u = await plugin(s, "uninstall", "claude", "--json");
    expect(u.code, u.stderr).toBe(0);
    expect(JSON.parse(u.stdout).allow_rules).toEqual({ path: settings, added: [], removed: added });
    expect(readJson(settings)).toEqual({
      model: "opus",
      permissions: {
        allow: ["Bash(npm test:*)", "Bash(ccmsg post:*)", "Bash(git status:*)"],
        deny: ["Bash(rm:*)"],
      },
    });
  });

  it("creates the settings file when there is none and removes it again; --no-allow-tools and no answer add nothing", async () => {
    const s = setup();
    const settings = settingsOf(s);
    for (const args of [["--no-allow-tools"], []]) {
      const r = await plugin(s, "install", "claude", ...args, "--json");
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(settings)).toBe(false);
    }
    const dry = await plugin(s, "install", "claude", "--allow-tools", "--dry-run", "--json");
    expect(JSON.parse(dry.stdout).allow_rules).toEqual({
      path: settings,
      added: ours,
      removed: [],
    });
    expect(existsSync(settings)).toBe(false);
    await plugin(s, "install", "claude", "--allow-tools");
    expect(readJson(settings)).toEqual({ permissions: { allow: ours } });
    // The person changes their mind: --no-allow-tools takes ccmsg's out.
    const no = await plugin(s, "install", "claude", "--no-allow-tools", "--json");
    expect(JSON.parse(no.stdout).allow_rules).toEqual({ path: settings, added: [], removed: ours });
    expect(existsSync(settings)).toBe(false);
    // Another scope: the current directory's local settings, then none.
    const local = join(s.root, ".claude", "settings.local.json");
    const at = { cwd: s.root };
    await runCli(
      ["plugin", "install", "claude", "--allow-tools", "--scope", "local"],
      s.env,
      "",
      at,
    );
    expect(readJson(local)).toEqual({ permissions: { allow: ours } });
    expect(existsSync(settings)).toBe(false);
    await runCli(["plugin", "uninstall", "claude"], s.env, "", at);
    expect(existsSync(join(s.root, ".claude"))).toBe(false);
  });

  it("refuses a settings file it cannot read, both answers at once, and an unknown scope", async () => {
    const s = setup();
    writeFileSync(settingsOf(s), "{ not json");
    const r = await plugin(s, "install", "claude", "--allow-tools");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is not a JSON object; ccmsg will not rewrite it");
    expect(readFileSync(settingsOf(s), "utf8")).toBe("{ not json");
    // Refused before anything was written or registered.
    expect(existsSync(s.pluginDir)).toBe(false);
    expect(s.calls()).toEqual([]);
    for (const [args, says] of [
      [["--allow-tools", "--no-allow-tools"], "not both"],
      [["--allow-tools", "--scope", "team"], "--scope is user, project or local"],
    ] as const) {
      const refused = await plugin(s, "install", "claude", ...args, "--json");
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr).error).toMatchObject({ code: "invalid_args" });
      expect(refused.stderr).toContain(says);
    }
  });
});
