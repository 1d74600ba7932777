import { connect, type Socket } from "node:net";

/** A reply as it arrives: success (`ok: true` and the result fields) or
 * failure (`ok: false` and `error`). */
export interface Reply {
  ok: boolean;
  request_id?: string;
  error?: { code: string; msg: string };
  [field: string]: unknown;
}

/** A topic frame or a connection event. */
export interface Pushed {
  ev: string;
  topic?: string;
  snapshot?: true;
  instance?: string;
  data?: unknown;
  [field: string]: unknown;
}

/** A failure reply, raised by `call`. Branch on `code`, never on the message. */
export class ClientError extends Error {
  override readonly name = "ClientError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The connection went away with this request unanswered. */
export const CONNECTION_CLOSED = "connection_closed";

interface Transport {
  write(text: string): void;
  close(): void;
  pause(): void;
  resume(): void;
}

/**
 * A typed client for one instance connection. Requests are correlated by
 * `request_id`, so several may be in flight and complete in any order; topic
 * frames and connection events go to listeners. On close every pending
 * request is rejected with one code and the table is cleared.
 */
export class Client {
  private readonly pending = new Map<
    string,
    { resolve: (r: Reply) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private partial = "";
  private readonly pushedListeners = new Set<(p: Pushed) => void>();
  private readonly lineListeners = new Set<(line: string, parsed: unknown) => void>();
  private readonly closeListeners = new Set<() => void>();
  closed = false;

  private constructor(private readonly transport: Transport) {}

  /** Connect to the instance's local socket. */
  static connectUnix(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket: Socket = connect(path);
      const client = new Client({
        write: (text) => socket.write(text),
        close: () => socket.end(),
        pause: () => socket.pause(),
        resume: () => socket.resume(),
      });
      socket.setEncoding("utf8");
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        socket.on("error", () => {});
        resolve(client);
      });
      socket.on("data", (chunk: string) => client.receive(chunk));
      socket.on("close", () => client.handleClose());
    });
  }

  /** Connect over WebSocket (`<endpoint>ws`). Loads `ws` only when used. */
  static async connectWebSocket(
    url: string,
    headers: Record<string, string> = {},
  ): Promise<Client> {
    const { WebSocket } = await import("ws");
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const client = new Client({
        write: (text) => ws.send(text),
        close: () => ws.close(),
        pause: () => ws.pause(),
        resume: () => ws.resume(),
      });
      ws.once("error", reject);
      ws.once("open", () => {
        ws.off("error", reject);
        ws.on("error", () => {});
        resolve(client);
      });
      ws.on("message", (data) => client.receive(`${data.toString()}\n`));
      ws.on("close", () => client.handleClose());
    });
  }

  /** Send a request and resolve with its reply, success or failure. */
  request(op: string, args: Record<string, unknown> = {}, requestId?: string): Promise<Reply> {
    if (this.closed)
      return Promise.reject(new ClientError(CONNECTION_CLOSED, "connection is closed"));
    const request_id = requestId ?? String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(request_id, { resolve, reject });
      this.transport.write(`${JSON.stringify({ ...args, op, request_id })}\n`);
    });
  }

  /** Send a request and resolve with its result; a failure throws
   * `ClientError` with the contract code. */
  async call<T = Record<string, unknown>>(
    op: string,
    args: Record<string, unknown> = {},
  ): Promise<T> {
    const reply = await this.request(op, args);
    if (!reply.ok)
      throw new ClientError(reply.error?.code ?? "internal_error", reply.error?.msg ?? "");
    const { ok: _ok, request_id: _id, ...result } = reply;
    return result as T;
  }

  /** Write raw text as is (tests use it for malformed frames). */
  sendRaw(text: string): void {
    this.transport.write(text);
  }

  /** Listen to topic frames and connection events. Returns an unsubscriber. */
  onPushed(listener: (p: Pushed) => void): () => void {
    this.pushedListeners.add(listener);
    return () => this.pushedListeners.delete(listener);
  }

  /** Listen to every inbound line, including replies nobody waits for. */
  onLine(listener: (line: string, parsed: unknown) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  /** Stop reading: what the instance sends waits in the OS and then in the
   * instance's egress queue for this connection. */
  pauseReading(): void {
    this.transport.pause();
  }

  resumeReading(): void {
    this.transport.resume();
  }

  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  close(): void {
    this.transport.close();
  }

  private receive(chunk: string): void {
    const text = this.partial + chunk;
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== "") this.dispatch(line);
    }
    this.partial = text.slice(start);
  }

  private dispatch(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    for (const l of this.lineListeners) l(line, parsed);
    if (typeof parsed !== "object" || parsed === null) return;
    const frame = parsed as Record<string, unknown>;
    if (typeof frame.ok === "boolean") {
      const id = frame.request_id;
      const waiter = typeof id === "string" ? this.pending.get(id) : undefined;
      if (waiter !== undefined) {
        this.pending.delete(id as string);
        waiter.resolve(frame as Reply);
      }
      return;
    }
    if (typeof frame.ev === "string") for (const l of this.pushedListeners) l(frame as Pushed);
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.pending.values())
      w.reject(new ClientError(CONNECTION_CLOSED, "connection closed before the reply"));
    this.pending.clear();
    for (const l of this.closeListeners) l();
  }
}
