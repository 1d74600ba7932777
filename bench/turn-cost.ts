import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { FakeModel, type ModelRequest } from "../test/helpers/fake-model.js";
import { CLI, startDaemon } from "./daemon.js";
import { median, round } from "./measure.js";

// What ccmsg adds to a Claude Code turn (issue 26): the real Claude Code (the
// devDependency, harness spec §11) runs `-p` sessions against a scripted model
// on loopback, one prompt and then TOOL_CALLS tool calls, in three config
// homes: without the plugin, with it and its instance running, and with it
// and no instance able to start (the hooks must fail open). Added per prompt
// is a one-prompt session's wall time over the bare one's; added per tool
// call is the median gap between the model's consecutive requests in the
// 20-call sessions (answer → hooks → tool → next request) over the bare one's,
// which whole-session times would bury in noise. The tool is Write of a new
// small file, which the plugin's PreToolUse hook matches (a Read would pass
// no hook of ours).

const ROOT = join(import.meta.dirname, "..");
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const TOOL_CALLS = 20;
const ROUNDS = 3;
const KEY = "sk-ant-test";
/** Refused at start (beyond loopback without a passkey): an instance that
 * cannot come up, so every hook meets no instance and must fail open. */
const UNSTARTABLE_HTTP = "256.0.0.1:1";
const run = promisify(execFile);

type Setup = "bare" | "plugin_instance_up" | "plugin_instance_down";

/** A config home that has answered Claude Code's first-run questions (as
 * test/helpers/real-claude.ts does; that module pulls in vitest), and the
 * environment pointing it at the scripted model. */
function claudeHome(root: string, cwd: string, modelUrl: string): Record<string, string> {
  const env: Record<string, string> = {
    HOME: join(root, "home"),
    CLAUDE_CONFIG_DIR: join(root, "claude"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_STATE_HOME: join(root, "xstate"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_RUNTIME_DIR: join(root, "run"),
  };
  for (const d of Object.values(env)) mkdirSync(d, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(env.CLAUDE_CONFIG_DIR!, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [KEY], rejected: [] },
      projects: { [cwd]: { hasTrustDialogAccepted: true } },
    }),
  );
  return {
    ...env,
    PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}`,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: KEY,
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
}

function installPlugin(env: Record<string, string>, stateDir: string): void {
  execFileSync(process.execPath, [CLI, "plugin", "install", "claude", "--json"], {
    env: { ...env, CCMSG_STATE_DIR: stateDir },
    stdio: "ignore",
  });
}

export async function benchTurnCost() {
  const root = mkdtempSync(join(tmpdir(), "ccmsg-bench-turn-"));
  const cwd = join(root, "work");
  mkdirSync(cwd);
  // The session being run: its tool calls and where its files go.
  let current = { calls: 0, tag: "", requests: [] as number[] };
  const model = await FakeModel.start((req: ModelRequest) => {
    // Claude Code's side requests (titles, summaries) offer no tools.
    if (!req.raw.includes('"name":"Write"')) return { text: "ok" };
    current.requests.push(performance.now());
    const results = (req.raw.match(/"type":"tool_result"/g) ?? []).length;
    if (results >= current.calls) return { text: "done" };
    const file_path = join(cwd, `${current.tag}-${results}.txt`);
    return { tool: { name: "Write", input: { file_path, content: "x\n" } } };
  });

  const upState = join(root, "up-state");
  const instance = await startDaemon(
    upState,
    { HOME: join(root, "up-home"), XDG_STATE_HOME: join(root, "up-home") },
    "127.0.0.1:0",
  );
  const envs: Record<Setup, Record<string, string>> = {
    bare: claudeHome(join(root, "bare"), cwd, model.url),
    plugin_instance_up: claudeHome(join(root, "up"), cwd, model.url),
    plugin_instance_down: {
      ...claudeHome(join(root, "down"), cwd, model.url),
      CCMSG_HTTP: UNSTARTABLE_HTTP,
    },
  };
  installPlugin(envs.plugin_instance_up, upState);
  installPlugin(envs.plugin_instance_down, join(root, "down-state"));

  let sessions = 0;
  let failed = 0;
  const gaps = new Map<Setup, number[]>();
  const firstRequest = new Map<Setup, number[]>();
  const session = async (setup: Setup, calls: number): Promise<number> => {
    current = { calls, tag: `s${++sessions}`, requests: [] };
    const t0 = performance.now();
    const { stdout } = await run(
      CLAUDE,
      ["-p", "write the files", "--output-format", "json", "--permission-mode", "acceptEdits"],
      { cwd, env: envs[setup], timeout: 120_000 },
    );
    const ms = performance.now() - t0;
    const out = JSON.parse(stdout) as { is_error?: boolean; num_turns?: number };
    if (out.is_error || (out.num_turns ?? 0) < calls + 1) failed++;
    const at = current.requests;
    firstRequest.set(setup, [...(firstRequest.get(setup) ?? []), at[0]! - t0]);
    for (let k = 1; k < at.length; k++)
      gaps.set(setup, [...(gaps.get(setup) ?? []), at[k]! - at[k - 1]!]);
    return ms;
  };

  const setups: Setup[] = ["bare", "plugin_instance_up", "plugin_instance_down"];
  const samples = new Map<string, number[]>();
  // One warm-up each (the binary's pages, the plugin's first load), then the
  // setups interleaved round by round so the machine's load falls on all.
  for (const setup of setups) await session(setup, 0);
  gaps.clear();
  firstRequest.clear();
  for (let r = 0; r < ROUNDS; r++) {
    for (const setup of setups) {
      for (const calls of [0, TOOL_CALLS]) {
        const key = `${setup}/${calls}`;
        samples.set(key, [...(samples.get(key) ?? []), await session(setup, calls)]);
      }
    }
  }
  const exited = new Promise((r) => instance.child.once("exit", r));
  instance.child.kill("SIGTERM");
  await exited;
  await model.close();
  rmSync(root, { recursive: true, force: true });

  const m = (setup: Setup, calls: number) => median(samples.get(`${setup}/${calls}`)!);
  const gap = (setup: Setup) => median(gaps.get(setup)!);
  const first = (setup: Setup) => median(firstRequest.get(setup)!);
  const added = (setup: Setup) => ({
    per_prompt_ms: round(m(setup, 0) - m("bare", 0)),
    per_tool_call_ms: round(gap(setup) - gap("bare"), 2),
    spawn_to_first_model_request_ms: round(first(setup) - first("bare")),
  });
  const up = added("plugin_instance_up");
  const down = added("plugin_instance_down");
  return {
    rounds: ROUNDS,
    tool_calls: TOOL_CALLS,
    tool: "Write (a new 2-byte file; the PreToolUse matcher's)",
    sessions_failed: failed,
    session_ms_median: Object.fromEntries(
      setups.flatMap((s) => [0, TOOL_CALLS].map((c) => [`${s}/${c}_calls`, round(m(s, c))])),
    ),
    tool_call_gap_ms_median: Object.fromEntries(setups.map((s) => [s, round(gap(s), 1)])),
    instance_up: {
      ...up,
      met: up.per_prompt_ms <= 5 && up.per_tool_call_ms <= 2,
    },
    instance_down: {
      ...down,
      met: down.per_prompt_ms <= 50 && down.per_tool_call_ms <= 50,
    },
    targets: {
      instance_up_per_prompt_ms: 5,
      instance_up_per_tool_call_ms: 2,
      instance_down_per_hook_ms: 50,
    },
    note: "per prompt = a whole one-prompt `claude -p` session (SessionStart, UserPromptSubmit, Stop, SessionEnd hooks and the plugin's MCP server included) over the same without the plugin; per tool call = the median gap between the model's requests over the bare gap",
  };
}
