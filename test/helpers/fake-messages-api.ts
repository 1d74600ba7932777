import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// A Messages API on loopback that answers the way Anthropic's does, for the
// gateway's tests and benchmarks: a stream (`message_start`, text deltas,
// `message_delta` with usage, `message_stop`) in as many chunks as asked, a
// plain JSON message, or a 529 `overloaded_error`. It keeps what it was sent.

export interface FakeApiRequest {
  headers: IncomingHttpHeaders;
  path: string;
  body: string;
}

export interface FakeApiOptions {
  /** Text deltas per streamed answer (default 5). */
  deltas?: number;
  /** Bytes of text in each delta (default 16). */
  deltaBytes?: number;
}

export class FakeMessagesApi {
  readonly requests: FakeApiRequest[] = [];
  /** The next answers are 529 overloads while this is above 0. */
  overloaded = 0;
  /** Set by `hold`: streamed answers stop after their first event until it
   * resolves. */
  private held: Promise<void> | undefined;

  /** Hold streamed answers open after `message_start` (a model still
   * thinking) until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise((r) => {
      release = r;
    });
    return () => {
      this.held = undefined;
      release();
    };
  }

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(options: FakeApiOptions = {}): Promise<FakeMessagesApi> {
    let api!: FakeMessagesApi;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        const body = Buffer.concat(parts).toString("utf8");
        api.requests.push({ headers: req.headers, path: req.url ?? "", body });
        if (api.overloaded > 0) {
          api.overloaded--;
          res.writeHead(529, { "content-type": "application/json", "request-id": "req_overload" });
          res.end(overloadBody());
          return;
        }
        let parsed: { stream?: boolean; model?: string } = {};
        try {
          parsed = JSON.parse(body);
        } catch {}
        const model = parsed.model ?? "claude-test";
        const headers = {
          "request-id": `req_${api.requests.length}`,
          ...RATE_LIMIT_HEADERS,
          "x-fake-echo": "kept",
        };
        if (!parsed.stream) {
          res.writeHead(200, { ...headers, "content-type": "application/json" });
          res.end(JSON.stringify(message(model)));
          return;
        }
        res.writeHead(200, { ...headers, "content-type": "text/event-stream" });
        const [first, ...rest] = streamChunks(model, options);
        res.write(first);
        const finish = () => {
          for (const chunk of rest) res.write(chunk);
          res.end();
        };
        if (api.held === undefined) finish();
        else void api.held.then(finish);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    api = new FakeMessagesApi(server, `http://127.0.0.1:${port}`);
    return api;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** Rate-limit headers as the API sends them: an API key's request limit and
 * a subscription's five-hour window. */
export const RATE_LIMIT_HEADERS = {
  "anthropic-ratelimit-requests-limit": "100",
  "anthropic-ratelimit-requests-remaining": "75",
  "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z",
  "anthropic-ratelimit-unified-5h-utilization": "0.42",
  "anthropic-ratelimit-unified-5h-reset": "4070908800",
  "anthropic-ratelimit-unified-5h-status": "allowed",
};

export const USAGE_START = {
  input_tokens: 12,
  output_tokens: 1,
  cache_creation_input_tokens: 2048,
  cache_read_input_tokens: 4096,
};
export const OUTPUT_TOKENS = 42;

/** The SSE of one answer, one event per chunk. */
export function streamChunks(model: string, options: FakeApiOptions = {}): string[] {
  const text = "x".repeat(options.deltaBytes ?? 16);
  const ev = (name: string, data: Record<string, unknown>) =>
    `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const out = [
    ev("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        usage: USAGE_START,
      },
    }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    // Model text that mentions "usage" must not be read as usage.
    ev("content_block_delta", {
      index: 0,
      delta: { type: "text_delta", text: '{"usage": {"output_tokens": 999}}' },
    }),
  ];
  for (let i = 0; i < (options.deltas ?? 5); i++)
    out.push(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
  out.push(
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: OUTPUT_TOKENS },
    }),
    ev("message_stop", {}),
  );
  return out;
}

export function overloadBody(): string {
  return JSON.stringify({
    type: "error",
    error: { type: "overloaded_error", message: "Overloaded" },
  });
}

function message(model: string) {
  return {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    usage: { ...USAGE_START, output_tokens: OUTPUT_TOKENS },
  };
}
