import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeModel, type ModelRequest } from "../test/helpers/fake-model.js";
import { CLI, startDaemon } from "./daemon.js";
import { cpuMs, median, round } from "./measure.js";

// What ccmsg adds to a Claude Code turn (issue 26): the real Claude Code (the
// devDependency, harness spec §11) against a scripted model on loopback, in
// three config homes: without the plugin, with it and its instance running,
// and with it and no instance able to start (the hooks must fail open). Each
// session stays open on stream-json input and takes TURNS turns of one prompt
// and TOOL_CALLS tool calls. Timed from this side, against the model's
// requests: a prompt written → the turn's first request (UserPromptSubmit and
// Claude Code's own work; the first turn's is left out, it also carries the
// start), each tool call's answer → the next request (PreToolUse, the tool,
// PostToolUse), spawn → first request (SessionStart, the plugin's MCP server)
// and stdin closed → exit (Stop, SessionEnd). What ccmsg adds is each
// median over the same median without the plugin. The tool is Write of a new
// small file, which the plugin's PreToolUse hook matches (a Read would pass
// no hook of ours), in acceptEdits mode: nothing asks. A fourth home is the
// floor: the same hot events as http hooks to a server that answers `{}` at
// once, nothing else — what Claude Code itself spends on an http hook, which
// no hook server can take back; `over_floor` is what ccmsg adds beyond it.

const ROOT = join(import.meta.dirname, "..");
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const TOOL_CALLS = 20;
const TURNS = 7;
/** Every other prompt after the first is written this long after the last
 * turn's result, as a person's is: the waiter the turn's Stop started has
 * settled by then. The rest follow at once, as a driver's (the SDK, a
 * queued prompt) do, while it starts. */
const PAUSE_MS = 1000;
const ROUNDS = 3;
const SESSION_TIMEOUT_MS = 300_000;
const KEY = "sk-ant-test";
/** Refused at start (beyond loopback without a passkey): an instance that
 * cannot come up, so every hook meets no instance and must fail open. */
const UNSTARTABLE_HTTP = "256.0.0.1:1";

/** The medians reported, by what each sample is. */
const ROWS = {
  prompt: "prompt_to_request",
  paused: "prompt_after_pause_to_request",
  tool: "tool_call_gap",
  start: "session_start",
  end: "session_end",
};

type Setup = "bare" | "http_floor" | "plugin_instance_up" | "plugin_instance_down";

/** Claude Code's settings for the floor: http hooks on the plugin's hot
 * events (the same matcher) to `url`. */
function floorSettings(url: string): string {
  const hook = [{ type: "http", url, timeout: 5 }];
  return JSON.stringify({
    hooks: {
      UserPromptSubmit: [{ hooks: hook }],
      PreToolUse: [{ matcher: "Edit|Write|MultiEdit|NotebookEdit", hooks: hook }],
    },
  });
}

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
  // The turn being run: when the model saw its requests, how many tool
  // results the conversation held before it, and where its files go.
  let turn = { tag: "", base: -1, requests: [] as number[] };
  const model = await FakeModel.start((req: ModelRequest) => {
    // Claude Code's side requests (titles, summaries) offer no tools.
    if (!req.raw.includes('"name":"Write"')) return { text: "ok" };
    turn.requests.push(performance.now());
    const results = (req.raw.match(/"type":"tool_result"/g) ?? []).length;
    if (turn.base < 0) turn.base = results;
    const done = results - turn.base;
    if (done >= TOOL_CALLS) return { text: "done" };
    const file_path = join(cwd, `${turn.tag}-${done}.txt`);
    return { tool: { name: "Write", input: { file_path, content: "x\n" } } };
  });

  // The floor's hook server: `{}` to every hook, at once.
  const floor = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((r) => floor.listen(0, "127.0.0.1", r));
  const floorUrl = `http://127.0.0.1:${(floor.address() as AddressInfo).port}/hook`;

  const upState = join(root, "up-state");
  const instance = await startDaemon(
    upState,
    { HOME: join(root, "up-home"), XDG_STATE_HOME: join(root, "up-home") },
    "127.0.0.1:0",
  );
  const envs: Record<Setup, Record<string, string>> = {
    bare: claudeHome(join(root, "bare"), cwd, model.url),
    http_floor: claudeHome(join(root, "floor"), cwd, model.url),
    plugin_instance_up: claudeHome(join(root, "up"), cwd, model.url),
    plugin_instance_down: {
      ...claudeHome(join(root, "down"), cwd, model.url),
      CCMSG_HTTP: UNSTARTABLE_HTTP,
    },
  };
  writeFileSync(join(envs.http_floor.CLAUDE_CONFIG_DIR!, "settings.json"), floorSettings(floorUrl));
  installPlugin(envs.plugin_instance_up, upState);
  installPlugin(envs.plugin_instance_down, join(root, "down-state"));

  const setups: Setup[] = ["bare", "http_floor", "plugin_instance_up", "plugin_instance_down"];
  const samples = new Map<string, number[]>();
  const add = (setup: Setup, what: string, ms: number) => {
    const key = `${setup}/${what}`;
    samples.set(key, [...(samples.get(key) ?? []), ms]);
  };
  let sessions = 0;
  let incomplete = 0;
  // The instance's own CPU over the recorded sessions that use it.
  let instanceCpuMs = 0;
  let instanceTurns = 0;
  const session = async (setup: Setup, record = true) => {
    const tag = `s${++sessions}`;
    const measured = record && setup === "plugin_instance_up";
    const cpu0 = measured ? cpuMs(instance.pid) : 0;
    const t0 = performance.now();
    const child = spawn(
      CLAUDE,
      [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
      ],
      { cwd, env: envs[setup], stdio: ["pipe", "pipe", "ignore"] },
    );
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.stdin.on("error", () => {}); // a session that died is counted below
    const hung = setTimeout(() => child.kill("SIGKILL"), SESSION_TIMEOUT_MS);
    // One `result` line ends each turn.
    let pending = "";
    let resultSeen: (() => void) | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      let nl = pending.indexOf("\n");
      for (; nl >= 0; nl = pending.indexOf("\n")) {
        const event = JSON.parse(pending.slice(0, nl)) as { type?: string };
        if (event.type === "result") resultSeen?.();
        pending = pending.slice(nl + 1);
      }
    });
    for (let k = 0; k < TURNS; k++) {
      turn = { tag: `${tag}-${k}`, base: -1, requests: [] };
      const ended = new Promise<void>((r) => {
        resultSeen = r;
      });
      const paused = k > 0 && k % 2 === 0;
      if (paused) await new Promise((r) => setTimeout(r, PAUSE_MS));
      const sent = performance.now();
      child.stdin.write(
        `${JSON.stringify({ type: "user", message: { role: "user", content: "write the files" } })}\n`,
      );
      await Promise.race([ended, exited]);
      const at = turn.requests;
      if (at.length !== TOOL_CALLS + 1) incomplete++;
      if (!record || at.length === 0) continue;
      if (k === 0) add(setup, "start", at[0]! - t0);
      else add(setup, paused ? "paused" : "prompt", at[0]! - sent);
      for (let i = 1; i < at.length; i++) add(setup, "tool", at[i]! - at[i - 1]!);
    }
    const closed = performance.now();
    child.stdin.end();
    await exited;
    clearTimeout(hung);
    if (record) add(setup, "end", performance.now() - closed);
    if (measured) {
      instanceCpuMs += cpuMs(instance.pid) - cpu0;
      instanceTurns += TURNS;
    }
  };

  // One warm-up each (the binary's pages, the plugin's first load), then the
  // setups interleaved round by round so the machine's load falls on all.
  for (const setup of setups) await session(setup, false);
  for (let r = 0; r < ROUNDS; r++) for (const setup of setups) await session(setup);
  const exited = new Promise((r) => instance.child.once("exit", r));
  instance.child.kill("SIGTERM");
  await exited;
  await model.close();
  await new Promise((r) => floor.close(r));
  rmSync(root, { recursive: true, force: true });

  const m = (setup: Setup, what: string) => median(samples.get(`${setup}/${what}`) ?? [NaN]);
  const added = (setup: Setup) => ({
    per_prompt_ms: round(m(setup, "prompt") - m("bare", "prompt"), 1),
    per_prompt_after_pause_ms: round(m(setup, "paused") - m("bare", "paused"), 1),
    per_tool_call_ms: round(m(setup, "tool") - m("bare", "tool"), 1),
    session_start_ms: round(m(setup, "start") - m("bare", "start")),
    session_end_ms: round(m(setup, "end") - m("bare", "end")),
  });
  const up = added("plugin_instance_up");
  const overFloor = {
    per_prompt_ms: round(m("plugin_instance_up", "prompt") - m("http_floor", "prompt"), 1),
    per_prompt_after_pause_ms: round(
      m("plugin_instance_up", "paused") - m("http_floor", "paused"),
      1,
    ),
    per_tool_call_ms: round(m("plugin_instance_up", "tool") - m("http_floor", "tool"), 1),
  };
  const down = added("plugin_instance_down");
  return {
    rounds: ROUNDS,
    turns_per_session: TURNS,
    tool_calls_per_turn: TOOL_CALLS,
    tool: "Write (a new 2-byte file; the PreToolUse matcher's)",
    turns_incomplete: incomplete,
    median_ms: Object.fromEntries(
      setups.map((s) => [
        s,
        Object.fromEntries(Object.entries(ROWS).map(([w, row]) => [row, round(m(s, w), 1)])),
      ]),
    ),
    instance_up: {
      ...up,
      // Whole sessions (start, turns, end) over their turns: what the
      // instance spends, on the same cores as the session, per turn of a
      // prompt and TOOL_CALLS edits.
      instance_cpu_ms_per_turn: round(instanceCpuMs / instanceTurns, 1),
      met:
        Math.max(up.per_prompt_ms, up.per_prompt_after_pause_ms) <= 5 && up.per_tool_call_ms <= 2,
    },
    // Claude Code's own cost of an http hook (the floor over bare), and
    // what ccmsg adds over that floor.
    http_hook_floor: added("http_floor"),
    instance_up_over_floor: overFloor,
    instance_down: { ...down, met: down.per_prompt_ms <= 50 && down.per_tool_call_ms <= 50 },
    targets: {
      instance_up_per_prompt_ms: 5,
      instance_up_per_tool_call_ms: 2,
      instance_down_per_hook_ms: 50,
    },
  };
}
