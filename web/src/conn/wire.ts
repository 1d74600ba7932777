import { signal } from "@preact/signals";
import type { OpName } from "../../../src/contract/attributes.js";
import { PROTOCOL_VERSION } from "../../../src/contract/constants.js";
import type { ErrorCode } from "../../../src/contract/errors.js";
import type { FoldableFrame } from "../../../src/contract/fold.js";
import type { OpArgs, OpResult } from "../../../src/contract/schemas.js";

/**
 * The console's one connection to its instance: a WebSocket to `./ws` (same
 * origin; the owner's cookie from `ccmsg open` goes with the upgrade),
 * greeted as the person (`hello` with role `user`), requests correlated by
 * `request_id`, topic frames handed to their subscribers.
 *
 * Connection states are explicit and visible (the header shows them). When
 * the socket drops, every request still waiting is settled with one code
 * (`instance_unreachable` — the answer never came, so the outcome is
 * unknown), the connection is tried again with backoff (250 ms doubling to
 * 5 s, jittered; at once after the instance said `restarting`), and every
 * topic still wanted is subscribed again, so each starts over with a
 * snapshot. Nothing here keeps what the person typed: views own that.
 */

export type ConnState =
  /** Opening the socket or greeting, for the first time. */
  | "connecting"
  /** Greeted; requests and topics flow. */
  | "open"
  /** Lost; waiting before the next try (see `retryAt`). */
  | "reconnecting"
  /** The instance refuses this browser: it has no owner cookie (run `ccmsg open`). */
  | "signed_out";

/** A refusal from the instance (a contract code), or a request that could
 * not be answered because the connection went away. */
export class WireError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface TopicFrame extends FoldableFrame {
  ev: "topic";
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: WireError): void;
}

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 5000;
/** After `restarting` the instance comes back on the same port shortly. */
const AFTER_RESTART_MS = 100;

export interface WireOptions {
  /** The WebSocket URL; default `ws(s)://<this page's directory>ws`. */
  url?: string;
  /** How to ask whether this browser is signed in, when the socket keeps
   * failing before it opens (a browser cannot read a refused upgrade's status). */
  probeAuth?: () => Promise<"ok" | "signed_out" | "unreachable">;
  /** Subprotocols to offer (a person's `ccmsg.token.<access token>`). */
  protocols?: () => string[];
}

export class Wire {
  readonly state = signal<ConnState>("connecting");
  /** When the next try starts (ms since the epoch), while reconnecting. */
  readonly retryAt = signal<number | undefined>(undefined);
  /** Last time the connection was lost; undefined while never lost. */
  readonly lostAt = signal<number | undefined>(undefined);
  /** The instance that answered the last greeting. */
  readonly instance = signal<string | undefined>(undefined);
  /** Increments on every (re)greeting: views that fetch over HTTP refetch. */
  readonly generation = signal(0);

  private ws: WebSocket | undefined;
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly topics = new Map<string, Set<(frame: TopicFrame) => void>>();
  private readonly refusals = new Map<string, Set<(error: WireError) => void>>();
  private readonly events = new Set<(ev: Record<string, unknown>) => void>();
  private readonly url: string;
  private stopped = false;

  constructor(private readonly options: WireOptions = {}) {
    this.url = options.url ?? defaultUrl();
  }

  start(): void {
    this.stopped = false;
    this.open();
    // A browser that comes back online retries at once rather than waiting
    // out a long backoff.
    addEventListener("online", () => {
      if (this.state.peek() === "reconnecting") this.retryNow();
    });
  }

  /** Close for good (tests, page teardown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ws?.close();
  }

  /** Try again now instead of waiting out the backoff. */
  retryNow(): void {
    if (this.state.peek() === "open" || this.stopped) return;
    clearTimeout(this.timer);
    this.attempt = 0;
    this.open();
  }

  /** Send a request; resolves with the op's result, rejects with its code. */
  request<Op extends OpName>(op: Op, args: OpArgs<Op>): Promise<OpResult<Op>> {
    if (this.state.peek() !== "open")
      return Promise.reject(new WireError("instance_unreachable", "not connected to the instance"));
    return this.send(op, args as Record<string, unknown>) as Promise<OpResult<Op>>;
  }

  /** Listen to a topic. The subscription is made now (or when the connection
   * is next greeted) and made again after every reconnect; the returned
   * function stops listening (and unsubscribes when nobody else listens). */
  listen(
    topic: string,
    listener: (frame: TopicFrame) => void,
    refused?: (error: WireError) => void,
  ): () => void {
    let set = this.topics.get(topic);
    const first = set === undefined;
    if (set === undefined) {
      set = new Set();
      this.topics.set(topic, set);
    }
    set.add(listener);
    if (refused !== undefined) {
      const r = this.refusals.get(topic) ?? new Set();
      r.add(refused);
      this.refusals.set(topic, r);
    }
    if (first && this.state.peek() === "open") this.subscribe(topic);
    return () => {
      if (refused !== undefined) this.refusals.get(topic)?.delete(refused);
      const current = this.topics.get(topic);
      if (current === undefined || !current.delete(listener) || current.size > 0) return;
      this.topics.delete(topic);
      this.refusals.delete(topic);
      if (this.state.peek() === "open") this.send("topic_unsubscribe", { topic }).catch(() => {});
    };
  }

  /** Connection events (`restarting`, …). */
  onEvent(listener: (ev: Record<string, unknown>) => void): () => void {
    this.events.add(listener);
    return () => this.events.delete(listener);
  }

  private open(): void {
    if (this.stopped) return;
    this.retryAt.value = undefined;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url, this.options.protocols?.() ?? []);
    } catch {
      this.lost();
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      void this.greet();
    };
    ws.onmessage = (event) => {
      if (typeof event.data === "string") this.receive(event.data);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.settleAll();
      if (!opened) void this.failedBeforeOpen();
      else this.lost();
    };
  }

  private async greet(): Promise<void> {
    try {
      const hello = (await this.send("hello", {
        role: "user",
        protocol_version: PROTOCOL_VERSION,
        client_version: "ccmsg-console",
      })) as OpResult<"hello">;
      this.attempt = 0;
      this.instance.value = hello.instance;
      this.state.value = "open";
      this.generation.value++;
      for (const topic of this.topics.keys()) this.subscribe(topic);
    } catch {
      this.ws?.close();
    }
  }

  private subscribe(topic: string): void {
    this.send("topic_subscribe", { topic }).catch((error: WireError) => {
      // A lost connection is not a refusal: the next greeting subscribes again.
      if (error.code === "instance_unreachable") return;
      for (const r of [...(this.refusals.get(topic) ?? [])]) r(error);
    });
  }

  private send(op: string, args: Record<string, unknown>): Promise<unknown> {
    const ws = this.ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN)
      return Promise.reject(new WireError("instance_unreachable", "not connected to the instance"));
    const request_id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(request_id, { resolve, reject });
      ws.send(`${JSON.stringify({ ...args, op, request_id })}\n`);
    });
  }

  private receive(data: string): void {
    for (const line of data.split("\n")) {
      if (line.trim() === "") continue;
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof frame.ok === "boolean") this.reply(frame);
      else if (frame.ev === "topic") this.topicFrame(frame as unknown as TopicFrame);
      else this.event(frame);
    }
  }

  private reply(frame: Record<string, unknown>): void {
    const id = frame.request_id;
    if (typeof id !== "string") return;
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    if (frame.ok === true) {
      const { ok: _ok, request_id: _id, ...result } = frame;
      p.resolve(result);
    } else {
      const error = frame.error as { code: ErrorCode; msg: string } | undefined;
      p.reject(new WireError(error?.code ?? "internal_error", error?.msg ?? "refused"));
    }
  }

  private topicFrame(frame: TopicFrame): void {
    const listeners = this.topics.get(frame.topic);
    if (listeners === undefined) return;
    for (const l of [...listeners]) l(frame);
  }

  private event(ev: Record<string, unknown>): void {
    for (const l of [...this.events]) l(ev);
    if (ev.ev === "restarting") {
      // The instance is going down and will be back on the same port.
      this.attempt = 0;
      this.ws?.close();
    }
  }

  private settleAll(): void {
    const lost = new WireError(
      "instance_unreachable",
      "the connection to the instance was lost before it answered",
    );
    for (const p of this.pending.values()) p.reject(lost);
    this.pending.clear();
  }

  private lost(): void {
    if (this.stopped) return;
    if (this.state.peek() === "open" || this.lostAt.peek() === undefined)
      this.lostAt.value = Date.now();
    this.state.value = "reconnecting";
    const delay =
      this.attempt === 0 && this.lostAt.peek() !== undefined
        ? AFTER_RESTART_MS
        : Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (this.attempt - 1));
    this.attempt++;
    const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
    this.retryAt.value = Date.now() + jittered;
    this.timer = setTimeout(() => this.open(), jittered);
  }

  /** The socket never opened: the instance may be down, or may refuse this
   * browser (no owner cookie) — which a page cannot tell from the socket. */
  private async failedBeforeOpen(): Promise<void> {
    const verdict = (await this.options.probeAuth?.().catch(() => "unreachable")) ?? "unreachable";
    if (verdict === "signed_out") {
      this.state.value = "signed_out";
      this.retryAt.value = undefined;
      // Keep looking, slowly: `ccmsg open` in another tab signs this one in too.
      this.timer = setTimeout(() => this.open(), BACKOFF_MAX_MS);
      return;
    }
    this.lost();
  }
}

function defaultUrl(): string {
  const url = new URL("ws", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.hash = "";
  url.search = "";
  return url.href;
}

/** Ask the instance whether this browser's cookie (or person's token) is
 * good (`./api/health` answers 401 without one). */
export async function probeAuth(
  headers: Record<string, string> = {},
): Promise<"ok" | "signed_out" | "unreachable"> {
  try {
    const res = await fetch(new URL("api/health", location.href), {
      credentials: "same-origin",
      cache: "no-store",
      headers,
    });
    if (res.status === 401) return "signed_out";
    return res.ok ? "ok" : "unreachable";
  } catch {
    return "unreachable";
  }
}
