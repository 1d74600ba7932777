import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// A scripted stand-in for the Anthropic Messages API on loopback, for running
// the real Claude Code in tests (harness spec §11): it answers
// `POST /v1/messages` with the SSE events Claude Code reads (message_start,
// content blocks with text or tool_use input deltas, message_delta with the
// stop reason, message_stop), or with one JSON message when not streaming.
// The script sees each request and decides the answer; every request is kept.

export type ModelTurn = { text: string } | { tool: { name: string; input: unknown } };

export interface ModelRequest {
  /** The session Claude Code names in its header. */
  sid?: string;
  body: { stream?: boolean; model?: string; messages?: unknown[] };
  /** The raw body, for searching. */
  raw: string;
}

export class FakeModel {
  readonly requests: ModelRequest[] = [];
  private listeners: (() => void)[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(script: (req: ModelRequest) => ModelTurn): Promise<FakeModel> {
    let model!: FakeModel;
    const server = createServer((req, res) => {
      void readBody(req).then((raw) => {
        if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end("{}");
          return;
        }
        let body: ModelRequest["body"] = {};
        try {
          body = JSON.parse(raw);
        } catch {}
        const sid = req.headers["x-claude-code-session-id"];
        const request = { sid: typeof sid === "string" ? sid : undefined, body, raw };
        model.requests.push(request);
        for (const l of model.listeners) l();
        const turn = script(request);
        if (!body.stream) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(message(body.model, turn)));
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const [event, data] of streamEvents(body.model, turn))
          res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    model = new FakeModel(server, `http://127.0.0.1:${port}`);
    return model;
  }

  /** Resolves with the first request (already seen or to come) that matches. */
  waitFor(pred: (r: ModelRequest) => boolean, timeoutMs = 30_000): Promise<ModelRequest> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no such model request")), timeoutMs);
      const check = () => {
        const found = this.requests.find(pred);
        if (found === undefined) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve(found);
      };
      this.listeners.push(check);
      check();
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString();
    });
    req.on("end", () => resolve(raw));
  });
}

const USAGE = { input_tokens: 1, output_tokens: 1 };
/** Each answer is its own API message, as the real API's ids are. */
let answers = 0;

function message(model: string | undefined, turn: ModelTurn) {
  const content =
    "text" in turn
      ? [{ type: "text", text: turn.text }]
      : [{ type: "tool_use", id: "toolu_fake", name: turn.tool.name, input: turn.tool.input }];
  const stop_reason = "text" in turn ? "end_turn" : "tool_use";
  return {
    id: `msg_fake_${++answers}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason,
    stop_sequence: null,
    usage: USAGE,
  };
}

function streamEvents(model: string | undefined, turn: ModelTurn): [string, object][] {
  const start = { ...message(model, turn), content: [], stop_reason: null };
  const block: [string, object][] =
    "text" in turn
      ? [
          ["content_block_start", { index: 0, content_block: { type: "text", text: "" } }],
          ["content_block_delta", { index: 0, delta: { type: "text_delta", text: turn.text } }],
        ]
      : [
          [
            "content_block_start",
            {
              index: 0,
              content_block: {
                type: "tool_use",
                id: `toolu_${Date.now()}`,
                name: turn.tool.name,
                input: {},
              },
            },
          ],
          [
            "content_block_delta",
            {
              index: 0,
              delta: { type: "input_json_delta", partial_json: JSON.stringify(turn.tool.input) },
            },
          ],
        ];
  return [
    ["message_start", { message: start }],
    ...block,
    ["content_block_stop", { index: 0 }],
    [
      "message_delta",
      {
        delta: { stop_reason: "text" in turn ? "end_turn" : "tool_use", stop_sequence: null },
        usage: { output_tokens: 1 },
      },
    ],
    ["message_stop", {}],
  ];
}
