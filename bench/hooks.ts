import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import { loadOrMintHookToken } from "../src/state/hook-token.js";
import { CLI, startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";
import { postToSeen } from "./receipts-latency.js";

// The hooks a Claude Code session runs (issue 9): what each costs to start,
// and how long a message takes from `message_send` to the waiter's exit 2
// (the moment Claude Code wakes the session). A real instance, real processes.

function timeRun(args: string[], input: string, env: NodeJS.ProcessEnv, runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, args, { env, input, stdio: ["pipe", "ignore", "ignore"] });
    samples.push(performance.now() - t0);
  }
  return round(median(samples));
}

async function startInstance(dir: string) {
  // HTTP and the hook token, as for a person with Codex's plugin installed:
  // Codex's prompt hook also tells the hook route (DR-0062).
  loadOrMintHookToken(dir);
  return startDaemon(dir, { HOME: dir }, "127.0.0.1:0");
}

/** Start a waiter for `sid`, as an asyncRewake Stop hook would. */
function armWaiter(env: NodeJS.ProcessEnv, sid: string) {
  const child = spawn(process.execPath, [CLI, "wait", "--hook"], {
    env,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.stdin.end(JSON.stringify({ session_id: sid, hook_event_name: "Stop" }));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, exited };
}

export async function benchHooks() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-hooks-"));
  const inst = await startInstance(dir);
  const env = { PATH: process.env.PATH, HOME: dir, CCMSG_STATE_DIR: dir };
  const payload = (event: string, extra: object = {}) =>
    JSON.stringify({ session_id: randomUUID(), cwd: dir, hook_event_name: event, ...extra });
  const runs = 15;
  timeRun(["-e", "0"], "", env, 3);
  const node = timeRun(["-e", "0"], "", env, runs);
  const hello = timeRun([CLI, "hello", "--hook"], payload("SessionStart"), env, runs);
  const inbox = timeRun([CLI, "inbox", "--hook"], payload("UserPromptSubmit"), env, runs);
  const wait = timeRun([CLI, "wait", "--hook", "--max-wait", "0.001"], payload("Stop"), env, runs);
  // Codex runs one script for both: its prompt hook also posts to the hook
  // route that a prompt was typed (the attention queue's at-the-terminal
  // rule); its Stop hook does not, so the two differ by that post.
  const codex = [CLI, "inbox", "--hook", "--harness", "codex"];
  const codexPrompt = timeRun(codex, payload("UserPromptSubmit", { prompt: "hi" }), env, runs);
  const codexStop = timeRun(codex, payload("Stop"), env, runs);

  // Wake latency: a waiter armed and idle; post; time to its exit 2.
  const sender = await Client.connectUnix(inst.socket);
  await sender.call("hello", { role: "session", sid: randomUUID(), protocol_version: 3 });
  const wakes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const sid = randomUUID();
    const w = armWaiter(env, sid);
    // Time to arm (start, greet, subscribe: ~50 ms here); only post → exit is
    // measured, and a post that found no waiter yet is left out.
    await new Promise((r) => setTimeout(r, 250));
    const t0 = performance.now();
    // Not armed yet on a loaded machine: the session is unknown still.
    const reply = await sender
      .call("message_send", { to: sid, text: `wake ${i}` })
      .catch(() => ({ delivered: false }));
    if (!reply.delivered) w.child.kill();
    const code = await w.exited;
    if (reply.delivered && code === 2) wakes.push(performance.now() - t0);
  }
  sender.close();
  // Post → seen_at (DR-0054), by the messaging socket and by the waiter.
  const seen = await postToSeen(inst.socket, join(dir, ".claude"), env);
  inst.child.kill("SIGTERM");
  await new Promise((r) => inst.child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  return {
    start_cost_ms: {
      bare_node: node,
      hello_hook: hello,
      inbox_hook: inbox,
      wait_hook_connect_subscribe_exit: wait,
      codex_prompt_hook: codexPrompt,
      codex_stop_hook: codexStop,
      over_bare_node: {
        hello_hook: round(hello - node),
        inbox_hook: round(inbox - node),
        wait_hook: round(wait - node),
        codex_prompt_hook: round(codexPrompt - node),
        codex_stop_hook: round(codexStop - node),
      },
    },
    wake_latency_ms: {
      samples: wakes.length,
      p50: round(median(wakes)),
      p99: round(percentile(wakes, 99)),
    },
    post_to_seen_ms: seen,
    targets: { hook_start_over_node_ms: 25 },
  };
}
