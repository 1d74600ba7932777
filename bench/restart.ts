import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDaemon } from "./daemon.js";
import { spawnToFirstReply, timeCommand } from "./instance.js";
import { median, round, rssMb } from "./measure.js";

// `npm run bench -- restart`: only the lean group's start rows (issue 26),
// in seconds rather than its minute: restart to the first answered request
// in an empty state dir, beside a bare `node -e 0`, and idle RSS, measured
// the way bench/lean.ts measures them.

const HTTP = "127.0.0.1:0";
const SETTLE_MS = 1500;

export async function benchRestart() {
  const root = mkdtempSync(join(tmpdir(), "ccmsg-bench-restart-"));
  const dir = join(root, "empty");
  const d = await startDaemon(dir, { HOME: root }, HTTP);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const idleRss = rssMb(d.pid);
  const exited = new Promise((r) => d.child.once("exit", r));
  d.child.kill("SIGTERM");
  await exited;
  const samples = await spawnToFirstReply(dir, 9, HTTP);
  const node = timeCommand(["-e", "0"], 9);
  rmSync(root, { recursive: true, force: true });
  const restart = round(median(samples));
  return {
    restart_to_first_reply_empty_ms: restart,
    bare_node_ms: node,
    over_floor_ms: round(restart - node),
    target_over_floor_ms: 40,
    samples_ms: samples.map((s) => round(s)),
    idle_rss_mb: idleRss,
    target_idle_rss_mb: 45,
  };
}
