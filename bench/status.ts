import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { foldFile } from "../src/harness/fold-cache.js";
import { CLI } from "./daemon.js";
import { median, round } from "./measure.js";

// Live status (issue 10 items 3–4): how fast the session fold reads a large
// Claude Code transcript (MB/s, and the memory it holds: the fold keeps a few
// KB whatever the size), and what a statusline refresh costs once the fold
// cache is warm — it folds only what was appended since the last refresh.

const TRANSCRIPT_MB = 100;
const RUNS = 15;

/** One turn of a busy session: an assistant record with a tool call and
 * usage, and the result — the record kinds a fold does real work on. */
function turn(i: number, pad: number): string {
  const t = new Date(Date.UTC(2026, 10, 30, 10, 0, 0) + i * 1000).toISOString();
  const id = `toolu_${i}`;
  const tool =
    i % 3 === 0
      ? {
          name: "Edit",
          input: { file_path: `/w/src/f${i % 200}.ts`, old_string: "a", new_string: "b" },
        }
      : { name: "Bash", input: { command: `npm test -- --shard ${i}`, description: "tests" } };
  const assistant = {
    type: "assistant",
    uuid: randomUUID(),
    isSidechain: false,
    cwd: "/w",
    sessionId: "bench",
    timestamp: t,
    message: {
      id: `msg_${i}`,
      model: "claude-opus-4-5",
      role: "assistant",
      content: [
        { type: "text", text: `step ${i} ${"z".repeat(pad)}` },
        { type: "tool_use", id, ...tool },
      ],
      usage: {
        input_tokens: 6,
        output_tokens: 240,
        cache_creation_input_tokens: 512,
        cache_read_input_tokens: 17_710,
      },
    },
  };
  const result = {
    type: "user",
    uuid: randomUUID(),
    isSidechain: false,
    cwd: "/w",
    timestamp: t,
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: "y".repeat(pad) }],
    },
  };
  return `${JSON.stringify(assistant)}\n${JSON.stringify(result)}\n`;
}

function writeTranscript(path: string, megabytes: number): number {
  const fd = openSync(path, "w");
  let bytes = 0;
  let i = 0;
  try {
    while (bytes < megabytes * 1024 * 1024) {
      let chunk = "";
      for (let k = 0; k < 200; k++) chunk += turn(i++, 600);
      writeSync(fd, chunk);
      bytes += Buffer.byteLength(chunk);
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

function timeStatusline(env: NodeJS.ProcessEnv, input: string, runs = RUNS): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, [CLI, "statusline"], {
      env,
      input,
      stdio: ["pipe", "ignore", "ignore"],
    });
    samples.push(performance.now() - t0);
  }
  return round(median(samples));
}

function timeBare(): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, ["-e", "0"], {
      env: { PATH: process.env.PATH },
      stdio: "ignore",
    });
    samples.push(performance.now() - t0);
  }
  return round(median(samples));
}

export async function benchStatus(): Promise<object> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-status-"));
  try {
    const claude = join(dir, "claude");
    const project = join(claude, "projects", "-w");
    mkdirSync(project, { recursive: true });
    const sid = randomUUID();
    const path = join(project, `${sid}.jsonl`);
    const bytes = writeTranscript(path, TRANSCRIPT_MB);

    // Fold throughput, no cache: the instance's catch-up and a cold CLI run.
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const t0 = performance.now();
    const { fold } = await foldFile(path, "claude");
    const foldMs = performance.now() - t0;
    clearInterval(sampler);
    const foldJsonBytes = Buffer.byteLength(JSON.stringify(fold));

    // The statusline: cold (folds the whole file, writes the cache), then warm.
    const stateDir = join(dir, "state");
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      CLAUDE_CONFIG_DIR: claude,
      CCMSG_STATE_DIR: stateDir,
      NO_COLOR: "1",
    };
    const input = JSON.stringify({
      session_id: sid,
      transcript_path: path,
      model: { display_name: "Opus" },
      cost: { total_cost_usd: 1.23, total_duration_ms: 4_320_000 },
      context_window: { remaining_percentage: 62 },
    });
    const bare = timeBare();
    const cold = timeStatusline(env, input, 1);
    const warm = timeStatusline(env, input);
    // A refresh after the session wrote one more turn (~2.5 KB).
    const appended: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      appendFileSync(path, turn(1_000_000 + i, 600));
      appended.push(timeStatusline(env, input, 1));
    }
    return {
      transcript_mb: round(bytes / 2 ** 20),
      tool_calls: fold.toolTotal,
      fold_ms: round(foldMs),
      fold_mb_per_s: round(bytes / 2 ** 20 / (foldMs / 1000)),
      fold_rss_growth_mb: round((peak - rssBefore) / 2 ** 20),
      fold_state_bytes: foldJsonBytes,
      bare_node_ms: bare,
      statusline_cold_ms: cold,
      statusline_warm_ms: warm,
      statusline_warm_over_bare_node_ms: round(warm - bare),
      statusline_after_append_ms: round(median(appended)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
