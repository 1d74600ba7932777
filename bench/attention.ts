import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import type { AttentionItem } from "../src/contract/attention.js";
import { loadOrMintHookToken } from "../src/state/hook-token.js";
import { startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// The attention queue (issue 27): how long a permission prompt takes from
// the hook's POST (as Claude Code 2.1.328 sends it, to the hook route) to
// the `attention` topic frame a console's WebSocket holds, and from the
// person's decision (`attention_decide` on that socket, as the console sends
// it) to the hook's HTTP reply — the moment Claude Code closes its dialog.

const SAMPLES = 40;
const PAYLOAD = JSON.parse(
  readFileSync(
    join(
      import.meta.dirname,
      "..",
      "test",
      "fixtures",
      "claude-code",
      "hooks",
      "permission-request-bash.json",
    ),
    "utf8",
  ),
) as Record<string, unknown>;

export async function benchAttention() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-attention-"));
  const stateDir = join(dir, "state");
  const inst = await startDaemon(
    stateDir,
    { HOME: dir, CLAUDE_CONFIG_DIR: join(dir, ".claude") },
    "127.0.0.1:0",
  );
  const http = inst.http!;
  const secret = readFileSync(join(stateDir, "owner.secret"), "utf8").trim();
  const hookToken = loadOrMintHookToken(stateDir);
  const console = await Client.connectWebSocket(`${http.replace(/^http/, "ws")}ws`, {
    authorization: `Bearer ${secret}`,
  });
  await console.call("hello", { role: "user", protocol_version: 3 });
  await console.call("topic_subscribe", { topic: "attention" });

  /** The first frame that shows session `sid`'s item pending. */
  const shown = (sid: string) =>
    new Promise<AttentionItem>((resolve) => {
      const off = console.onPushed((p) => {
        if (p.ev !== "topic" || p.topic !== "attention") return;
        const item = (p.data as { items: AttentionItem[] }).items.find(
          (i) => i.sid === sid && i.end === undefined,
        );
        if (item === undefined) return;
        off();
        resolve(item);
      });
    });

  const visible: number[] = [];
  const answered: number[] = [];
  for (let i = 0; i < SAMPLES + 3; i++) {
    const sid = randomUUID();
    const seen = shown(sid);
    const t0 = performance.now();
    const reply = fetch(new URL("/hooks/claude", http), {
      method: "POST",
      headers: { authorization: `Bearer ${hookToken}`, "content-type": "application/json" },
      body: JSON.stringify({ ...PAYLOAD, session_id: sid }),
    }).then((r) => r.json());
    const item = await seen;
    const t1 = performance.now();
    await console.call("attention_decide", {
      sid,
      id: item.id,
      behavior: "allow",
      via: "console",
    });
    const answer = (await reply) as { hookSpecificOutput?: unknown };
    const t2 = performance.now();
    if (answer.hookSpecificOutput === undefined) throw new Error("the hook was not answered");
    // The first rounds warm the HTTP stack and the schemas up.
    if (i < 3) continue;
    visible.push(t1 - t0);
    answered.push(t2 - t1);
  }
  console.close();
  inst.child.kill("SIGTERM");
  await new Promise((r) => inst.child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  const stats = (xs: number[]) => ({
    samples: xs.length,
    p50: round(median(xs)),
    p95: round(percentile(xs, 95)),
  });
  return {
    request_to_console_frame_ms: stats(visible),
    decide_to_hook_reply_ms: stats(answered),
    targets: { request_to_console_ms: 1000 },
  };
}
