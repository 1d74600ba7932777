import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import {
  editConflicts,
  globsOverlap,
  liveReservations,
  RESERVATIONS_NS,
} from "../src/contract/reservations.js";
import { CLI, startDaemon } from "./daemon.js";
import { median, nsPerOp, percentile, round } from "./measure.js";

// File reservations (DR-0041): what the PreToolUse hook costs an edit —
// `ccmsg reservations check --hook` end to end (a process, one connection,
// the namespace's snapshot) with 0, 100 and 1,000 live reservations held by
// others — and what the glob decisions cost on their own.

function reservation(i: number, now: number) {
  return {
    v: 1,
    glob: `/work/repo-${i % 50}/src/mod-${i}/**/*.ts`,
    holder: { sid: randomUUID(), name: `ws-${i}` },
    exclusive: true,
    reason: "bench",
    created_at: now,
    expires_at: now + 3_600_000,
  };
}

function timeHook(
  env: NodeJS.ProcessEnv,
  input: string,
  runs: number,
  args = ["reservations", "check", "--hook"],
): number[] {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, [CLI, ...args], {
      env,
      input,
      stdio: ["pipe", "ignore", "ignore"],
    });
    samples.push(performance.now() - t0);
  }
  return samples;
}

export async function benchReservations() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-reserve-"));
  const inst = await startDaemon(dir, { HOME: dir });
  const env = { PATH: process.env.PATH, HOME: dir, CCMSG_STATE_DIR: dir };
  const client = await Client.connectUnix(inst.socket);
  await client.call("hello", { role: "user", protocol_version: 3 });
  const payload = JSON.stringify({
    session_id: randomUUID(),
    hook_event_name: "PreToolUse",
    cwd: "/work/repo-7",
    tool_name: "Edit",
    tool_input: { file_path: "/work/repo-7/src/mod-7/deep/a.ts", old_string: "a", new_string: "b" },
  });
  const runs = 15;
  timeHook(env, payload, 3);
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, ["-e", "0"], { env, stdio: "ignore" });
    node.push(performance.now() - t0);
  }
  // The prompt hook every session already runs, for comparison (same run).
  const inbox = timeHook(env, payload, runs, ["inbox", "--hook"]);
  const hook: Record<string, { p50: number; p99: number }> = {};
  let held = 0;
  const now = Date.now();
  for (const count of [0, 100, 1000]) {
    const writes: Promise<unknown>[] = [];
    for (; held < count; held++)
      writes.push(
        client.call("kv_write", {
          ns: RESERVATIONS_NS,
          key: `bench:${held}`,
          value: reservation(held, now),
        }),
      );
    await Promise.all(writes);
    const s = timeHook(env, payload, runs);
    hook[`reservations_${count}`] = { p50: round(median(s)), p99: round(percentile(s, 99)) };
  }
  client.close();
  inst.child.kill("SIGTERM");
  await new Promise((r) => inst.child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });

  const entries = Array.from({ length: 1000 }, (_, i) => ({
    key: `k${i}`,
    value: reservation(i, now),
  }));
  const live = liveReservations(entries, now);
  return {
    hook_check_ms: {
      bare_node_p50: round(median(node)),
      inbox_hook_p50: round(median(inbox)),
      ...hook,
    },
    decide_us: {
      edit_against_1000: round(
        nsPerOp(() => editConflicts(live, null, "/work/repo-7/src/mod-7/deep/a.ts"), 50) / 1000,
      ),
      overlap_pair: round(
        nsPerOp(() => globsOverlap("/work/**/src/*/x/**/*.ts", "/work/repo/src/**/a?.ts"), 20_000) /
          1000,
        3,
      ),
    },
  };
}
