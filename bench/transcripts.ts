import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Pushed } from "../src/client/client.js";
import { startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// Raw transcripts (issue 10 item 1): how long an appended line takes to reach
// a `transcript:<sid>` subscriber (file write → frame received), and how long
// a subscriber waits for the snapshot of a large file (the catch-up every
// feed does once). A real instance and real files.

function line(i: number, pad = 0): string {
  return `${JSON.stringify({
    type: "assistant",
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    message: {
      role: "assistant",
      content: [{ type: "text", text: `step ${i} ${"z".repeat(pad)}` }],
    },
  })}\n`;
}

export async function benchTranscripts() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-transcripts-"));
  const claude = join(dir, "claude");
  const projects = join(claude, "projects", "-bench");
  mkdirSync(projects, { recursive: true });
  const { child, socket } = await startDaemon(join(dir, "state"), {
    HOME: dir,
    CLAUDE_CONFIG_DIR: claude,
  });
  const person = await Client.connectUnix(socket);
  await person.call("hello", { role: "user", protocol_version: 3 });
  const waiters: ((p: Pushed) => void)[] = [];
  person.onPushed((p) => {
    for (const w of waiters.splice(0)) w(p);
  });
  const nextFrame = () => new Promise<Pushed>((resolve) => waiters.push(resolve));

  // Append → frame.
  const sid = randomUUID();
  const path = join(projects, `${sid}.jsonl`);
  writeFileSync(path, line(0));
  const topic = `transcript:${sid}`;
  let snapshot = nextFrame();
  await person.call("topic_subscribe", { topic });
  await snapshot;
  const latencies: number[] = [];
  for (let i = 1; i <= 200; i++) {
    const frame = nextFrame();
    const t0 = performance.now();
    appendFileSync(path, line(i));
    await frame;
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  await person.call("topic_unsubscribe", { topic });

  // Catch-up: subscribe to a 200 MB transcript and wait for its snapshot.
  const bigSid = randomUUID();
  const big = join(projects, `${bigSid}.jsonl`);
  const block = Array.from({ length: 1000 }, (_, i) => line(i, 900)).join("");
  writeFileSync(big, "");
  const target = 200 * 2 ** 20;
  for (let written = 0; written < target; written += Buffer.byteLength(block))
    appendFileSync(big, block);
  const t0 = performance.now();
  snapshot = nextFrame();
  await person.call("topic_subscribe", { topic: `transcript:${bigSid}` });
  const snap = await snapshot;
  const catchUpMs = performance.now() - t0;
  const size = (snap.data as { size: number }).size;

  person.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  return {
    append_to_frame_ms: {
      p50: round(median(latencies), 2),
      p99: round(percentile(latencies, 99), 2),
      samples: latencies.length,
    },
    catch_up_200mb: {
      ms: Math.round(catchUpMs),
      mb_per_s: round(size / 2 ** 20 / (catchUpMs / 1000)),
    },
  };
}
