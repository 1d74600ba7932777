import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import { DEFAULT_SEARCH_BUDGET_MS } from "../src/instance/session-control/session-search.js";
import { startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// session_search (issue 10 item 6): a search over 200 MB of Claude Code
// transcripts — 40 sessions of 5 MB, most bytes in tool output as in real
// sessions — with the default budget, while a second connection pings the
// instance back to back: the search must finish within its budget and the
// pings must not stall (the walk runs on a worker thread).

const SESSIONS = 40;
const SESSION_BYTES = 5 * 2 ** 20;

/** One turn: a prompt, a tool call with a large result, an answer. */
function turn(sid: string, i: number, needle: boolean): string {
  const at = new Date(Date.UTC(2026, 10, 30, 10, 0, i)).toISOString();
  const base = { sessionId: sid, cwd: "/work/bench", isSidechain: false, timestamp: at };
  const prompt = needle ? "please wire the zanzibar flag" : `look at step ${i} of the board`;
  return `${[
    { ...base, type: "user", uuid: randomUUID(), message: { role: "user", content: prompt } },
    {
      ...base,
      type: "assistant",
      uuid: randomUUID(),
      message: {
        role: "assistant",
        model: "claude-opus-4-5-20251101",
        content: [{ type: "tool_use", id: `t${i}`, name: "Read", input: { file_path: "/x" } }],
      },
    },
    {
      ...base,
      type: "user",
      uuid: randomUUID(),
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "y".repeat(24_000) }],
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: randomUUID(),
      message: { role: "assistant", content: [{ type: "text", text: `done with step ${i}` }] },
    },
  ]
    .map((r) => JSON.stringify(r))
    .join("\n")}\n`;
}

export async function benchSessionSearch() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-search-"));
  const claude = join(dir, "claude");
  const projects = join(claude, "projects", "-work-bench");
  mkdirSync(projects, { recursive: true });
  let total = 0;
  for (let s = 0; s < SESSIONS; s++) {
    const sid = randomUUID();
    const path = join(projects, `${sid}.jsonl`);
    writeFileSync(path, "");
    let chunk = "";
    for (let i = 0, size = 0; size < SESSION_BYTES; i++) {
      // One session in ten says the word once, in the middle.
      const t = turn(sid, i, s % 10 === 0 && i === 100);
      chunk += t;
      size += t.length;
      if (chunk.length > 1 << 20) {
        appendFileSync(path, chunk);
        chunk = "";
      }
    }
    appendFileSync(path, chunk);
    total += SESSION_BYTES;
  }
  const { child, socket } = await startDaemon(join(dir, "state"), {
    HOME: dir,
    CLAUDE_CONFIG_DIR: claude,
  });
  const person = await Client.connectUnix(socket);
  const pinger = await Client.connectUnix(socket);
  await person.call("hello", { role: "user", protocol_version: 3 });

  // Pings alone first: the baseline.
  const idle: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    await pinger.call("instance_ping", {});
    idle.push(performance.now() - t0);
  }

  const rounds: { ms: number; hits: number; truncated: boolean }[] = [];
  const during: number[] = [];
  for (let r = 0; r < 3; r++) {
    let done = false;
    const t0 = performance.now();
    const search = person
      .call("session_search", { query: "zanzibar flag" })
      .then((res) => ({
        ms: performance.now() - t0,
        ...(res as { hits: unknown[]; truncated: boolean }),
      }))
      .finally(() => {
        done = true;
      });
    while (!done) {
      const p0 = performance.now();
      await pinger.call("instance_ping", {});
      during.push(performance.now() - p0);
    }
    const res = await search;
    rounds.push({ ms: res.ms, hits: res.hits.length, truncated: res.truncated });
  }

  person.close();
  pinger.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  const ms = median(rounds.map((r) => r.ms));
  return {
    transcripts_mb: round(total / 2 ** 20),
    sessions: SESSIONS,
    budget_ms: DEFAULT_SEARCH_BUDGET_MS,
    search: {
      ms: Math.round(ms),
      mb_per_s: round(total / 2 ** 20 / (ms / 1000)),
      hits: rounds[0]!.hits,
      truncated: rounds.some((r) => r.truncated),
      within_budget: rounds.every((r) => !r.truncated && r.ms <= DEFAULT_SEARCH_BUDGET_MS),
    },
    ping_ms: {
      idle_p50: round(median(idle), 2),
      idle_p99: round(percentile(idle, 99), 2),
      during_search_p50: round(median(during), 2),
      during_search_p99: round(percentile(during, 99), 2),
      during_search_max: round(Math.max(...during), 2),
      samples: during.length,
    },
  };
}
