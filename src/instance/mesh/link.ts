import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import { encodeRequest, fitsFrame } from "../../contract/frames.js";
import type { Connection } from "../wire/connection.js";
import type { LinkReply } from "./port.js";

// One verified link to a peer (DR-0047): its socket's connection, who dialed
// it, when it was last heard, its beats and the requests waiting on it.

interface Pending {
  resolve(reply: LinkReply): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

type ErrorOf<R> = R extends { ok: false; error: infer E } ? E : never;

/** What a link reads of its peer's entry in the peer book (peer-book.ts),
 * which holds the links in turn. */
export interface LinkedPeer {
  readonly endpoint: string;
  readonly id?: string;
}

export class Link<P extends LinkedPeer = LinkedPeer> {
  readonly since = Date.now();
  lastHeard = this.since;
  ended = false;
  private readonly pending = new Map<string, Pending>();
  private beat: NodeJS.Timeout | undefined;

  constructor(
    readonly peer: P,
    readonly conn: Connection,
    /** `out`: this instance dialed it. */
    readonly direction: "in" | "out",
  ) {}

  private get name(): string {
    return this.peer.id ?? this.peer.endpoint;
  }

  /** A beat every `heartbeatMs`; `silent` once nothing was heard for `deadMs`. */
  startBeats(heartbeatMs: number, deadMs: number, silent: () => void): void {
    this.beat = setInterval(() => {
      if (Date.now() - this.lastHeard > deadMs) silent();
      else this.conn.send('{"mesh":"beat"}');
    }, heartbeatMs);
    this.beat.unref();
  }

  /** Send a request under `requestId`; the reply (or `instance_unreachable`
   * when none comes in time, or the link ends first) settles it. */
  request(
    requestId: string,
    frame: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<LinkReply> {
    const { op, ...args } = frame;
    const line = encodeRequest(String(op), requestId, args);
    if (!fitsFrame(line))
      return Promise.reject(
        contractError(
          "bad_request",
          `the request exceeds MAX_FRAME_BYTES (${MAX_FRAME_BYTES} bytes)`,
        ),
      );
    if (this.ended)
      return Promise.reject(
        contractError("instance_unreachable", `the link to ${this.name} is down`),
      );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(
          contractError(
            "instance_unreachable",
            `no reply from instance ${this.name} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.pending.set(requestId, { resolve, reject, timer });
      this.conn.send(line);
    });
  }

  /** A reply arrived; false when no request of ours waits for it. */
  settle(reply: Record<string, unknown>): boolean {
    const id = typeof reply.request_id === "string" ? reply.request_id : undefined;
    const waiting = id === undefined ? undefined : this.pending.get(id);
    if (id === undefined || waiting === undefined) return false;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    const { ok, request_id: _r, error, ...result } = reply;
    waiting.resolve(
      ok === true ? { ok: true, result } : { ok: false, error: error as ErrorOf<LinkReply> },
    );
    return true;
  }

  /** Out of service: beats stop, waiting requests fail. Once only. */
  retire(): boolean {
    if (this.ended) return false;
    this.ended = true;
    clearInterval(this.beat);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(contractError("instance_unreachable", `the link to ${this.name} dropped`));
    }
    this.pending.clear();
    return true;
  }
}
