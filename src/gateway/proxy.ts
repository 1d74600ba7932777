import { createHash } from "node:crypto";
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { isLoopbackHost } from "../net/address.js";
import type { LlmEvent } from "./event.js";
import { asSid, type RequestFacts } from "./request-facts.js";
import { bodyFacts, type ResponseFacts, SseObserver } from "./response-facts.js";

// `ccmsg gateway`: an HTTP pass-through for Anthropic-compatible Messages APIs
// (DR-0043). Request and response bodies are piped, never buffered on their
// way; what the events need is read on the side — request bodies in a worker
// thread, streamed responses by an observer that looks at each chunk after it
// was handed on. Credentials are forwarded and otherwise only ever hashed.

export interface GatewayOptions {
  host: string;
  port: number;
  /** The API base the request paths are appended to. */
  upstream: URL;
  /** Receives each event; must not block (the reporter batches). */
  report(event: LlmEvent): void;
  /** The worker script (request-worker.ts as built). */
  workerUrl: URL;
}

export interface RunningGateway {
  /** `host:port` bound. */
  address: string;
  close(): Promise<void>;
}

/** Headers that describe one hop, not the message (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
/** Request bodies above this are forwarded but not read for facts. */
const MAX_OBSERVED_REQUEST_BYTES = 64 * 1024 * 1024;
/** A plain (non-stream) response is kept for facts up to this size. */
const MAX_OBSERVED_RESPONSE_BYTES = 8 * 1024 * 1024;

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { upstream } = options;
  const secure = upstream.protocol === "https:";
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 256 })
    : new HttpAgent({ keepAlive: true, maxSockets: 256 });
  const send = secure ? httpsRequest : httpRequest;
  const base = upstream.pathname.replace(/\/$/, "");
  const facts = new FactsWorker(options.workerUrl);

  const loopback = isLoopbackHost(options.host);
  const server = createServer((req, res) => {
    const refusal = guard(req, loopback);
    if (refusal !== undefined) {
      req.resume();
      res.writeHead(403, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "permission_error", message: `ccmsg gateway: ${refusal}` },
        }),
      );
      return;
    }
    const path = `${base}${req.url ?? "/"}`;
    const observed = req.method === "POST" && /\/v1\/messages(\?|$)/.test(req.url ?? "");
    const up = send({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path,
      headers: forwardHeaders(req.rawHeaders, upstream.host),
      agent,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let requestFacts: Promise<RequestFacts> = Promise.resolve({});
    if (observed) {
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= MAX_OBSERVED_REQUEST_BYTES) chunks.push(c);
      });
      requestFacts = new Promise((resolve) =>
        req.on("end", () =>
          resolve(size <= MAX_OBSERVED_REQUEST_BYTES ? facts.read(chunks, size) : {}),
        ),
      );
    }
    // The event's fields that come from the request, without its body.
    const head: Head = {
      sid: asSid(req.headers["x-claude-code-session-id"]),
      credential: credentialName(req.headers),
      upstream: upstream.host,
    };
    up.on("response", (ures) => {
      const receivedAt = Date.now();
      res.writeHead(ures.statusCode ?? 502, ures.statusMessage, responseHeaders(ures.rawHeaders));
      ures.pipe(res);
      if (!observed) return;
      const status = ures.statusCode ?? 0;
      head.ratelimit = rateLimitHeaders(ures.rawHeaders);
      // After the pipe's own listener, so a chunk is handed on first.
      const observer = responseObserver(ures);
      void requestFacts.then((r) => options.report(eventOf(head, r, receivedAt, status)));
      ures.on("end", () => {
        void Promise.all([requestFacts, observer()]).then(([r, f]) =>
          options.report(eventOf(head, r, receivedAt, status, f, Date.now())),
        );
      });
    });
    up.on("error", () => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(
          `{"type":"error","error":{"type":"api_error","message":"ccmsg gateway: upstream unreachable"}}`,
        );
        if (observed)
          void requestFacts.then((r) =>
            options.report({
              ...eventOf(head, r, Date.now(), 502),
              error: "upstream_unreachable",
            }),
          );
      } else res.destroy();
    });
    // A client that goes away takes its upstream request with it.
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    address: `${address.includes(":") ? `[${address}]` : address}:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      await facts.close();
    },
  };
}

/**
 * Who may use the gateway: harnesses, never web pages. A browser always
 * names the page's origin on a POST, and a harness never does, so any
 * `Origin` is refused — a page the person visits cannot spend through the
 * person's gateway. Bound to loopback, the `Host` must be a loopback name
 * too, which a DNS-rebound page cannot send.
 */
function guard(req: IncomingMessage, loopback: boolean): string | undefined {
  if (req.headers.origin !== undefined) return "requests from web pages are refused";
  if (!loopback) return undefined;
  const host = req.headers.host?.toLowerCase();
  if (host === undefined) return "a Host header is required";
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
  return isLoopbackHost(name) ? undefined : `Host ${name} is not this loopback gateway`;
}

/** The client's headers for the upstream: hop-by-hop ones dropped, `Host`
 * the upstream's; the rest, credentials included, as sent. */
function forwardHeaders(raw: string[], host: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || name === "host") continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  out.push("host", host);
  return out;
}

/** The upstream's response headers for the client, hop-by-hop ones dropped;
 * names keep their case and repeated headers stay repeated. */
function responseHeaders(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

/**
 * A name for the credential a request carries: a short digest, which names
 * it across requests without being the secret or leading back to it (keys
 * and OAuth tokens are long random strings). Never logged, never stored.
 */
export function credentialName(headers: IncomingMessage["headers"]): string | undefined {
  const key = headers["x-api-key"];
  const bearer = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? "")?.[1];
  const secret = typeof key === "string" && key !== "" ? key : bearer;
  if (secret === undefined) return undefined;
  const kind = secret === key ? "key" : "oauth";
  return `${kind}-${createHash("sha256").update(secret).digest("hex").slice(0, 12)}`;
}

/**
 * Start observing a response: an SSE stream chunk by chunk, anything else
 * collected (bounded) and read at its end; a compressed body through a
 * decompressor on the side. Returns what resolves with the facts at the end.
 */
function responseObserver(ures: IncomingMessage): () => Promise<ResponseFacts> {
  const type = String(ures.headers["content-type"] ?? "");
  const encoding = String(ures.headers["content-encoding"] ?? "identity").toLowerCase();
  const decoder =
    encoding === "gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  const readable = encoding === "identity" || decoder !== undefined;
  const source = decoder ?? ures;
  if (decoder !== undefined) {
    decoder.on("error", () => {});
    ures.on("data", (c: Buffer) => decoder.write(c));
    ures.on("end", () => decoder.end());
  }
  const ended = new Promise<void>((resolve) => {
    source.on("end", resolve);
    source.on("error", () => resolve());
    ures.on("close", () => resolve());
  });
  if (!readable) return () => ended.then(() => ({ usage: {} }));
  if (type.startsWith("text/event-stream")) {
    const sse = new SseObserver();
    source.on("data", (c: Buffer) => sse.push(c));
    return () => ended.then(() => sse.facts);
  }
  const parts: Buffer[] = [];
  let size = 0;
  source.on("data", (c: Buffer) => {
    size += c.length;
    if (size <= MAX_OBSERVED_RESPONSE_BYTES) parts.push(c);
  });
  return () =>
    ended.then(() =>
      size <= MAX_OBSERVED_RESPONSE_BYTES
        ? bodyFacts(Buffer.concat(parts).toString("utf8"))
        : { usage: {} },
    );
}

/** What an event takes from the request's and response's headers. */
interface Head {
  sid: string | undefined;
  credential: string | undefined;
  upstream: string;
  ratelimit?: Record<string, string>;
}

const RATELIMIT_PREFIX = "anthropic-ratelimit-";

/** The response's `anthropic-ratelimit-*` headers, prefix off; undefined
 * when there are none. They state quota, never a secret. */
function rateLimitHeaders(raw: string[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith(RATELIMIT_PREFIX)) continue;
    const key = name.slice(RATELIMIT_PREFIX.length);
    if (key === "" || key.length > 64 || raw[i + 1]!.length > 256) continue;
    out ??= {};
    if (Object.keys(out).length < 64) out[key] = raw[i + 1]!;
  }
  return out;
}

function eventOf(
  head: Head,
  r: RequestFacts,
  receivedAt: number,
  status: number,
  f?: ResponseFacts,
  completedAt?: number,
): LlmEvent {
  const e: LlmEvent = { received_at: receivedAt };
  const sid = head.sid ?? r.sid;
  if (sid !== undefined) e.sid = sid;
  if (r.prefix !== undefined) e.prefix = r.prefix;
  const model = f?.model ?? r.model;
  if (model !== undefined) e.model = model.slice(0, 256);
  if (head.credential !== undefined) e.credential = head.credential;
  e.upstream = head.upstream;
  if (head.ratelimit !== undefined && completedAt === undefined) e.ratelimit = head.ratelimit;
  if (status >= 100 && status <= 599) e.status = status;
  // Nothing asked to be cached: the window ends as it opens.
  if (r.cache_ttl_secs !== undefined) e.cache_ttl_secs = r.cache_ttl_secs;
  else e.cache_expires_at = receivedAt;
  if (completedAt !== undefined) e.completed_at = completedAt;
  if (f !== undefined && Object.keys(f.usage).length > 0) e.usage = f.usage;
  if (f?.error !== undefined) e.error = f.error;
  return e;
}

/** The worker that reads request bodies (request-worker.ts), started on the
 * first request. A body it cannot read gives no facts, never an error. */
class FactsWorker {
  private worker: Worker | undefined;
  private next = 0;
  private readonly pending = new Map<number, (facts: RequestFacts) => void>();

  constructor(private readonly url: URL) {}

  read(chunks: Buffer[], size: number): Promise<RequestFacts> {
    const body = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      body.set(c, at);
      at += c.length;
    }
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.started().postMessage({ id, body }, [body.buffer]);
    });
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(this.url);
    worker.unref();
    worker.on("message", (m: { id: number; facts: RequestFacts }) => {
      this.pending.get(m.id)?.(m.facts);
      this.pending.delete(m.id);
    });
    // A worker that died answers nothing more: its callers get no facts, and
    // the next request starts another.
    worker.on("error", () => {});
    worker.on("exit", () => {
      if (this.worker === worker) this.worker = undefined;
      for (const resolve of this.pending.values()) resolve({});
      this.pending.clear();
    });
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }
}
