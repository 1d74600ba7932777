import { connect, type Socket } from "node:net";
import type { OpName } from "../contract/attributes.js";
import { ContractError, type ErrorBody, isErrorCode } from "../contract/errors.js";
import { classifyInbound, encodeRequest } from "../contract/frames.js";
import type { OpArgs, OpResult } from "../contract/schemas.js";
import { LineFramer } from "../net/line-framer.js";

/** A reply as it arrives: success (`ok: true` and the result fields) or
 * failure (`ok: false` and `error`). */
export type Reply<Op extends OpName = OpName> =
  | ({ ok: true; request_id: string } & OpResult<Op>)
  | { ok: false; request_id?: string; error: ErrorBody };

/** A reply read without knowing its op (`send`): the success fields stay
 * untyped. */
export interface RawReply {
  ok: boolean;
  request_id?: string;
  error?: ErrorBody;
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

/** An op's arguments, which may be left out when none is required. */
export type ArgsOf<Op extends OpName> =
  {} extends OpArgs<Op> ? [args?: OpArgs<Op>] : [args: OpArgs<Op>];

/** Replies larger than this are cut off by the instance long before; the
 * client's framer only guards its own memory. */
const MAX_INBOUND_FRAME = 64 * 1024 * 1024;

interface Link {
  write(text: string): void;
  close(): void;
  pause(): void;
  resume(): void;
}

/**
 * The one client of an instance connection (CLI, MCP server, tests, bench),
 * typed per op from the contract. Requests are correlated by `request_id`, so
 * several may be in flight and complete in any order; topic frames and
 * connection events go to listeners. On close every pending request is
 * rejected with one code (`instance_unreachable`) and the table is cleared.
 */
export class Client {
  private readonly pending = new Map<
    string,
    { resolve: (r: RawReply) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private readonly framer = new LineFramer(
    MAX_INBOUND_FRAME,
    (line) => this.receive(line),
    () => {},
  );
  private readonly pushedListeners = new Set<(p: Pushed) => void>();
  private readonly lineListeners = new Set<(line: string, parsed: unknown) => void>();
  private readonly closeListeners = new Set<() => void>();
  closed = false;

  private constructor(private readonly link: Link) {}

  /** Connect to the instance's local socket. */
  static connectUnix(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket: Socket = connect(path);
      const client = new Client({
        ...turnWriter(socket),
        pause: () => socket.pause(),
        resume: () => socket.resume(),
      });
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        socket.on("error", () => {});
        resolve(client);
      });
      socket.on("data", (chunk: Buffer) => client.framer.push(chunk));
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
      ws.on("message", (data: Buffer) => {
        client.framer.push(data);
        client.framer.push(NEWLINE);
      });
      ws.on("close", () => client.handleClose());
    });
  }

  /** Send a request of `op` and resolve with its reply, success or failure. */
  request<Op extends OpName>(op: Op, ...args: ArgsOf<Op>): Promise<Reply<Op>> {
    return this.send(op, args[0] ?? {}) as Promise<Reply<Op>>;
  }

  /** Send a request of `op` and resolve with its result; a failure throws
   * `ContractError` with the contract code. */
  async call<Op extends OpName>(op: Op, ...args: ArgsOf<Op>): Promise<OpResult<Op>> {
    const { ok, request_id: _id, error, ...result } = await this.send(op, args[0] ?? {});
    if (!ok) throw replyError(error ?? { code: "internal_error", msg: "failure without error" });
    return result as OpResult<Op>;
  }

  /**
   * Send any frame and resolve with its reply, untyped: for requests the
   * contract would refuse (tests of refusals) or ops named at run time.
   */
  send(op: string, args: object, requestId?: string): Promise<RawReply> {
    if (this.closed) {
      return Promise.reject(new ContractError("instance_unreachable", "connection is closed"));
    }
    const id = requestId ?? String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.link.write(`${encodeRequest(op, id, args)}\n`);
    });
  }

  /** Write raw text as is (tests use it for malformed frames). */
  sendRaw(text: string): void {
    this.link.write(text);
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
   * instance's outbound queue for this connection. */
  pauseReading(): void {
    this.link.pause();
  }

  resumeReading(): void {
    this.link.resume();
  }

  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  close(): void {
    this.link.close();
  }

  private receive(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    for (const l of this.lineListeners) l(line, parsed);
    const kind = classifyInbound(parsed);
    if (kind === "reply") {
      const reply = parsed as RawReply;
      const id = reply.request_id;
      const waiter = id === undefined ? undefined : this.pending.get(id);
      if (id !== undefined && waiter !== undefined) {
        this.pending.delete(id);
        waiter.resolve(reply);
      }
    } else if (kind !== undefined) {
      for (const l of this.pushedListeners) l(parsed as Pushed);
    }
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.pending.values()) {
      w.reject(new ContractError("instance_unreachable", "connection closed before the reply"));
    }
    this.pending.clear();
    for (const l of this.closeListeners) l();
  }
}

const NEWLINE = Buffer.from("\n");

/** Writes to `socket` in one turn of the event loop go out as one write: a
 * client with thousands of requests in flight otherwise pays a write call for
 * each (20,000 sends at once: 120–200 ms in the sending loop alone, before a
 * reply can be read). A close sends what is queued first. */
function turnWriter(socket: Socket): Pick<Link, "write" | "close"> {
  let queued = "";
  const flush = () => {
    if (queued === "") return;
    const text = queued;
    queued = "";
    socket.write(text);
  };
  return {
    write(text) {
      if (queued === "") process.nextTick(flush);
      queued += text;
    },
    close() {
      flush();
      socket.end();
    },
  };
}

/** A failure reply as the one error type (a code outside the contract, from a
 * newer instance, reads as internal_error). */
function replyError(error: ErrorBody): ContractError {
  return new ContractError(isErrorCode(error.code) ? error.code : "internal_error", error.msg);
}
