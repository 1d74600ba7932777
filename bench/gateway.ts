import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamChunks } from "../test/helpers/fake-messages-api.js";
import { CLI, startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// `ccmsg gateway` (issue 13, DR-0043) against a Messages API on loopback, each
// measure taken direct to the upstream and through the gateway, which reports
// to a real instance as it would in use:
// - added latency per request (p50/p99): a plain JSON answer, and a streamed
//   answer to its last byte;
// - added latency per streamed chunk: the upstream stamps each SSE event
//   with the time it wrote it (same process as the client, same clock) and
//   sends one every 2 ms, so each arrives as its own chunk;
// - throughput of streamed bytes: 16 KiB deltas as fast as the reader takes
//   them.
// Chunk delays and throughput are also taken through a bare Node pipe proxy,
// the cost of any extra hop, so the gateway's own share shows.

const REQUESTS = 400;
const CHUNKS = 500;
const CHUNK_GAP_MS = 2;
const THROUGHPUT_MB = 256;
const DELTA_BYTES = 16 * 1024;
const MB = 2 ** 20;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** POST a body, resolve with the answer's bytes and per-chunk arrival times. */
function post(
  base: string,
  path: string,
  body: string,
  onChunk?: (chunk: Buffer, at: number) => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "x-api-key": "sk-bench-0123456789",
          "x-claude-code-session-id": "0b1f4a6e-4a5c-4d7e-9f00-1234567890ab",
        },
      },
      (res) => {
        let bytes = 0;
        res.on("data", (c: Buffer) => {
          bytes += c.length;
          onChunk?.(c, performance.now());
        });
        res.on("end", () => resolve(bytes));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The upstream: `/v1/messages` answers by the body's `bench` field. */
async function upstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString()) as { bench: string };
      if (body.bench === "plain") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          '{"type":"message","model":"claude-bench","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":5,"output_tokens":1}}',
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (body.bench === "stream") {
        for (const c of streamChunks("claude-bench")) res.write(c);
        res.end();
        return;
      }
      if (body.bench === "stamped") {
        let i = 0;
        const tick = setInterval(() => {
          res.write(
            `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${performance.now()}"}}\n\n`,
          );
          if (++i === CHUNKS) {
            clearInterval(tick);
            res.end();
          }
        }, CHUNK_GAP_MS);
        return;
      }
      // Throughput: deltas until THROUGHPUT_MB went out, minding back-pressure.
      const delta = Buffer.from(
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${"y".repeat(DELTA_BYTES)}"}}\n\n`,
      );
      let sent = 0;
      const pump = () => {
        while (sent < THROUGHPUT_MB * MB) {
          sent += delta.length;
          if (!res.write(delta)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

async function latencies(base: string, kind: "plain" | "stream"): Promise<number[]> {
  const body = JSON.stringify({
    bench: kind,
    model: "claude-bench",
    stream: kind === "stream",
    system: [{ type: "text", text: "bench", cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: "hi" }],
  });
  for (let i = 0; i < 50; i++) await post(base, "v1/messages", body);
  const out: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await post(base, "v1/messages", body);
    out.push(performance.now() - t0);
  }
  return out;
}

async function chunkDelays(base: string): Promise<number[]> {
  const delays: number[] = [];
  const stamp = /"text":"([0-9.]+)"/g;
  await post(base, "v1/messages", JSON.stringify({ bench: "stamped", stream: true }), (c, at) => {
    for (const m of c.toString().matchAll(stamp)) delays.push(at - Number(m[1]));
  });
  return delays;
}

async function throughput(base: string): Promise<number> {
  const t0 = performance.now();
  const bytes = await post(base, "v1/messages", JSON.stringify({ bench: "bulk", stream: true }));
  return bytes / MB / ((performance.now() - t0) / 1000);
}

function startGateway(
  env: Record<string, string>,
  up: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [CLI, "gateway", "--json", "--listen", "127.0.0.1:0", "--upstream", up],
    { stdio: ["ignore", "pipe", "inherit"], env: { PATH: process.env.PATH, ...env } },
  );
  return listening(child);
}

/** A bare Node pipe proxy in its own process: what any one extra hop costs,
 * so the gateway's own share can be told apart from the hop's. */
const BARE_PROXY = `
const { createServer, request, Agent } = require("node:http");
const up = new URL(process.argv[1]);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const u = request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  req.pipe(u);
}).listen(0, "127.0.0.1", () => console.log(JSON.stringify({ listen: "127.0.0.1:" + server.address().port })));
`;

function startBareProxy(up: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["-e", BARE_PROXY, up], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return listening(child);
}

function listening(child: ChildProcess): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (c: Buffer) => {
      const { listen } = JSON.parse(c.toString().split("\n")[0]!) as { listen: string };
      resolve({ child, url: `http://${listen}/` });
    });
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}`)));
  });
}

const stats = (ms: number[]) => ({
  p50_ms: round(median(ms), 3),
  p99_ms: round(percentile(ms, 99), 3),
});

export async function benchGateway() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-gw-"));
  const env = {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, "config"),
    CLAUDE_CONFIG_DIR: join(dir, "claude"),
    CCMSG_STATE_DIR: join(dir, "state"),
  };
  mkdirSync(join(dir, "config", "ccmsg"), { recursive: true });
  writeFileSync(
    join(dir, "config", "ccmsg", "config.json"),
    JSON.stringify({ llm: { sources: { local: { token: "bench-token-0123456789" } } } }),
  );
  const daemon = await startDaemon(env.CCMSG_STATE_DIR, env, "127.0.0.1:0");
  const up = await upstream();
  const gw = await startGateway(env, up.url);
  const bare = await startBareProxy(up.url);
  try {
    const result: Record<string, unknown> = {};
    for (const kind of ["plain", "stream"] as const) {
      const direct = await latencies(up.url, kind);
      const viaBare = await latencies(bare.url, kind);
      const via = await latencies(gw.url, kind);
      result[`request_${kind}`] = {
        direct: stats(direct),
        via_bare_pipe_proxy: stats(viaBare),
        via_gateway: stats(via),
        added_p50_ms: round(median(via) - median(direct), 3),
        added_p99_ms: round(percentile(via, 99) - percentile(direct, 99), 3),
      };
    }
    const directChunks = await chunkDelays(up.url);
    const bareChunks = await chunkDelays(bare.url);
    const viaChunks = await chunkDelays(gw.url);
    result.streamed_chunk = {
      chunks: CHUNKS,
      direct: stats(directChunks),
      via_bare_pipe_proxy: stats(bareChunks),
      via_gateway: stats(viaChunks),
      added_p50_ms: round(median(viaChunks) - median(directChunks), 3),
      added_p99_ms: round(percentile(viaChunks, 99) - percentile(directChunks, 99), 3),
    };
    // Interleaved rounds, so a neighbour's burst on this shared machine
    // falls on all three alike.
    const direct: number[] = [];
    const viaBare: number[] = [];
    const via: number[] = [];
    for (let r = 0; r < 5; r++) {
      direct.push(await throughput(up.url));
      viaBare.push(await throughput(bare.url));
      via.push(await throughput(gw.url));
    }
    result.stream_throughput = {
      mib_per_run: THROUGHPUT_MB,
      direct_mib_s: round(median(direct)),
      via_bare_pipe_proxy_mib_s: round(median(viaBare)),
      via_gateway_mib_s: round(median(via)),
      gateway_vs_direct: round(median(via) / median(direct), 2),
      gateway_vs_bare_pipe_proxy: round(median(via) / median(viaBare), 2),
    };
    return result;
  } finally {
    // The gateway first, so its last batch reaches a running instance.
    const gwExit = new Promise((r) => gw.child.once("exit", r));
    gw.child.kill("SIGTERM");
    await Promise.race([gwExit, new Promise((r) => setTimeout(r, 2000))]);
    bare.child.kill("SIGTERM");
    daemon.child.kill("SIGTERM");
    up.server.closeAllConnections();
    up.server.close();
    agent.destroy();
    await new Promise((r) => setTimeout(r, 200));
    rmSync(dir, { recursive: true, force: true });
  }
}
