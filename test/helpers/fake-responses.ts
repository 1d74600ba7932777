import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// A scripted stand-in for the OpenAI Responses API on loopback, for running
// the real Codex CLI in tests (harness spec §11): it answers
// `POST /v1/responses` (streamed, as Codex always asks) with the SSE events
// Codex reads — response.created, the output item added and done (an
// assistant message with its text delta, or a function call), then
// response.completed with usage. Codex names its thread in a `thread-id`
// header. The script sees each request and decides the answer.

export type ResponsesTurn =
  | { text: string }
  /** A call of Codex's `exec_command` tool: Codex runs `cmd` in a shell;
   * with `escalate`, outside the sandbox, asked for with that justification
   * (under `approval_policy = "on-request"` Codex asks the person first). */
  | { exec: string; escalate?: string };

export interface ResponsesRequest {
  /** The thread Codex names in its header. */
  thread?: string;
  body: { model?: string; input?: unknown[]; tools?: { name?: string }[] };
  /** The raw body, for searching. */
  raw: string;
}

export class FakeResponses {
  readonly requests: ResponsesRequest[] = [];
  private listeners: (() => void)[] = [];
  private turns = 0;
  private constructor(
    private readonly server: Server,
    /** The `base_url` of a Codex model provider. */
    readonly baseUrl: string,
  ) {}

  static async start(script: (req: ResponsesRequest) => ResponsesTurn): Promise<FakeResponses> {
    let fake!: FakeResponses;
    const server = createServer((req, res) => {
      void readBody(req).then((raw) => {
        if (req.method !== "POST" || !req.url?.startsWith("/v1/responses")) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end("{}");
          return;
        }
        let body: ResponsesRequest["body"] = {};
        try {
          body = JSON.parse(raw);
        } catch {}
        const thread = req.headers["thread-id"];
        const request = { thread: typeof thread === "string" ? thread : undefined, body, raw };
        fake.requests.push(request);
        for (const l of fake.listeners) l();
        const n = ++fake.turns;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const data of events(n, script(request)))
          res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    fake = new FakeResponses(server, `http://127.0.0.1:${port}/v1`);
    return fake;
  }

  /** Resolves with the first request (already seen or to come) that matches. */
  waitFor(pred: (r: ResponsesRequest) => boolean, timeoutMs = 30_000): Promise<ResponsesRequest> {
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

/** The text of the last `user` message of a request's input (Codex puts its
 * own developer and environment messages around the person's words). */
export function lastUserText(req: ResponsesRequest): string {
  const input = (req.body.input ?? []) as {
    type?: string;
    role?: string;
    content?: { text?: string }[];
  }[];
  const user = input.filter((i) => i.type === "message" && i.role === "user").at(-1);
  return (user?.content ?? []).map((c) => c.text ?? "").join("");
}

/** Whether the request carries a tool's output (the turn after a call). */
export function toolOutput(req: ResponsesRequest): string | undefined {
  const input = (req.body.input ?? []) as { type?: string; output?: unknown }[];
  const last = input.at(-1);
  if (last?.type !== "function_call_output") return undefined;
  return typeof last.output === "string" ? last.output : JSON.stringify(last.output);
}

function events(n: number, turn: ResponsesTurn): Record<string, unknown>[] {
  const id = `resp_${n}`;
  const out: Record<string, unknown>[] = [{ type: "response.created", response: { id } }];
  if ("text" in turn) {
    const item = {
      type: "message",
      role: "assistant",
      id: `msg_${n}`,
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
    out.push(
      { type: "response.output_item.added", output_index: 0, item: { ...item, content: [] } },
      {
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        item_id: item.id,
        delta: turn.text,
      },
      { type: "response.output_item.done", output_index: 0, item },
    );
  } else {
    const item = {
      type: "function_call",
      id: `fc_${n}`,
      call_id: `call_${n}`,
      name: "exec_command",
      arguments: JSON.stringify({
        cmd: turn.exec,
        login: false,
        ...(turn.escalate === undefined
          ? {}
          : { sandbox_permissions: "require_escalated", justification: turn.escalate }),
      }),
    };
    out.push(
      { type: "response.output_item.added", output_index: 0, item },
      { type: "response.output_item.done", output_index: 0, item },
    );
  }
  out.push({
    type: "response.completed",
    response: {
      id,
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 110,
      },
    },
  });
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}
