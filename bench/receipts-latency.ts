import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "../src/client/client.js";
import type { Receipt } from "../src/contract/receipts.js";
import { processStart } from "../src/probes/process.js";
import { CLI } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// Post → seen_at (DR-0054): how long after `message_send` its receipt says
// the model saw it, by the messaging socket (route a) and by the waiter. The
// bench stands in for Claude Code on both ends the way 2.1.328 behaves: its
// messaging socket takes the frame and the transcript gets the `user` record
// ("Another Claude session sent a message:"); the waiter's exit 2 becomes the
// Stop-hook feedback record. What is measured is ccmsg's part: the watch
// event, the index worker reading the line, the stamp and the frame.

/** A Claude Code session as route (a) sees it: a live pid, its state and key
 * files, and a messaging socket that writes what it takes to the transcript. */
async function fakeSession(configHome: string, sid: string, transcript: (t: string) => void) {
  const proc: ChildProcess = spawn("sleep", ["600"], { stdio: "ignore" });
  const pid = proc.pid!;
  let start: string | undefined;
  for (let i = 0; i < 100 && start === undefined; i++) {
    start = await processStart(pid);
    if (start === undefined) await new Promise((r) => setTimeout(r, 10));
  }
  const dir = mkdtempSync(join(tmpdir(), "cc-"));
  const socketPath = join(dir, `${pid}.sock`);
  const token = randomBytes(16).toString("hex");
  const server: Server = createServer((conn) => {
    let buf = "";
    conn.on("error", () => {});
    conn.on("data", (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const frame = JSON.parse(buf.slice(0, nl)) as {
          type: string;
          message?: { content: string };
        };
        buf = buf.slice(nl + 1);
        if (frame.type === "user" && frame.message)
          transcript(`Another Claude session sent a message:\n${frame.message.content}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  const sessions = join(configHome, "sessions");
  mkdirSync(sessions, { recursive: true, mode: 0o700 });
  const row = {
    ...{ pid, sessionId: sid, cwd: "/work/bench", startedAt: Date.now(), procStart: start },
    ...{ version: "2.1.328", peerProtocol: 1, kind: "interactive", status: "idle" },
    messagingSocketPath: socketPath,
  };
  writeFileSync(join(sessions, `${pid}.json`), JSON.stringify(row));
  const hex = createHash("sha256").update(resolve(socketPath)).digest("hex");
  const key = join(sessions, `${pid}.${hex}.key`);
  writeFileSync(key, JSON.stringify({ peerToken: token, procStart: start }));
  chmodSync(key, 0o600);
  return () => {
    server.close();
    proc.kill();
  };
}

/** A transcript file of `sid` that takes `user` records. */
function transcriptOf(configHome: string, sid: string): (text: string) => void {
  const dir = join(configHome, "projects", "-work-bench");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${sid}.jsonl`);
  return (content) =>
    appendFileSync(
      path,
      `${JSON.stringify({
        type: "user",
        uuid: randomUUID(),
        sessionId: sid,
        timestamp: new Date().toISOString(),
        message: { role: "user", content },
      })}\n`,
    );
}

/** The first receipt of a new mid from `sender` to `to` that says seen. */
function seenOf(client: Client, topic: string, to: string): Promise<void> {
  return new Promise((resolve) => {
    const off = client.onPushed((p) => {
      if (p.ev !== "topic" || p.topic !== topic || p.snapshot) return;
      const receipts = (p.data as { receipts: Receipt[] }).receipts;
      if (receipts.some((r) => r.to === to && (r.state === "seen" || r.state === "read"))) {
        off();
        resolve();
      }
    });
  });
}

export async function postToSeen(socket: string, configHome: string, env: NodeJS.ProcessEnv) {
  const from = randomUUID();
  const sender = await Client.connectUnix(socket);
  await sender.call("hello", { role: "session", sid: from, protocol_version: 3 });
  const topic = `receipts:${from}`;
  await sender.call("topic_subscribe", { topic });
  const samples = { socket: [] as number[], waiter: [] as number[] };
  const stops: (() => void)[] = [];
  for (let i = 0; i < 20; i++) {
    // The socket route: a session whose harness socket takes it.
    const sid = randomUUID();
    const write = transcriptOf(configHome, sid);
    write("start");
    stops.push(await fakeSession(configHome, sid, write));
    const seen = seenOf(sender, topic, sid);
    const t0 = performance.now();
    const reply = await sender.call("message_send", { to: sid, text: `socket ${i}` });
    if (!reply.delivered) continue;
    await seen;
    samples.socket.push(performance.now() - t0);
  }
  for (let i = 0; i < 20; i++) {
    // The waiter route: a Stop hook's waiter; its exit 2 is the wake-up.
    const sid = randomUUID();
    const write = transcriptOf(configHome, sid);
    write("start");
    const child = spawn(process.execPath, [CLI, "wait", "--hook"], {
      env,
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdin!.end(JSON.stringify({ session_id: sid, hook_event_name: "Stop" }));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    // Until the waiter has greeted, the session is unknown and nothing is
    // stored: ask again. One held instead (the waiter greeted, not yet
    // subscribed) is left out: it would time the waiter's start.
    let reply: { delivered: boolean } | undefined;
    let t0 = 0;
    const seen = seenOf(sender, topic, sid);
    for (let tries = 0; reply === undefined && tries < 200; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      t0 = performance.now();
      reply = await sender
        .call("message_send", { to: sid, text: `waiter ${i}` })
        .catch(() => undefined);
    }
    if ((await exited) !== 2 || reply?.delivered !== true) continue;
    write(
      `<task-notification>\n<summary>Stop hook feedback</summary>\n</task-notification>\n<system-reminder>\nStop hook blocking error from command "Stop": ${stderr}\n\n</system-reminder>`,
    );
    await seen;
    samples.waiter.push(performance.now() - t0);
  }
  for (const stop of stops) stop();
  sender.close();
  const line = (s: number[]) => ({
    samples: s.length,
    p50: round(median(s)),
    p99: round(percentile(s, 99)),
  });
  return { socket: line(samples.socket), waiter: line(samples.waiter) };
}
