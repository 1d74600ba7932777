import { randomUUID } from "node:crypto";
import { Client, type Pushed, type RawReply as Reply } from "../../src/client/client.js";
import { CONNECTION_EVENTS } from "../../src/contract/envelope.js";
import {
  isOpName,
  replyErrors,
  topicFrameErrors,
  validationErrors,
} from "../../src/contract/index.js";
import { ownerHeaders } from "./http.js";

/** Everything any test peer saw that broke the contract. Tests assert it
 * stays empty: every reply and frame the instance emits must validate. */
export const contractViolations: string[] = [];

export function newSid(): string {
  return randomUUID();
}

/**
 * A test connection: a real client on a real socket that keeps every pushed
 * frame, lets a test wait for one by predicate, and checks every inbound line
 * against the contract as it arrives.
 */
export class Peer {
  readonly frames: Pushed[] = [];
  readonly lines: unknown[] = [];
  private readonly ops = new Map<string, string>();
  private waiters: { pred: (p: Pushed) => boolean; resolve: (p: Pushed) => void }[] = [];
  /** Frames already handed out by `next`, so each is returned once. */
  private readonly taken = new Set<Pushed>();

  private constructor(readonly client: Client) {
    client.onLine((line, parsed) => {
      this.lines.push(parsed);
      this.check(line, parsed);
    });
    client.onPushed((p) => {
      this.frames.push(p);
      const w = this.waiters.find((x) => x.pred(p));
      if (w !== undefined) {
        this.taken.add(p);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(p);
      }
    });
  }

  static async unix(path: string): Promise<Peer> {
    return new Peer(await Client.connectUnix(path));
  }

  static async ws(url: string, headers: Record<string, string> = {}): Promise<Peer> {
    return new Peer(await Client.connectWebSocket(url, { ...ownerHeaders(url), ...headers }));
  }

  private check(line: string, parsed: unknown): void {
    if (parsed === undefined) {
      contractViolations.push(`not JSON: ${line.slice(0, 200)}`);
      return;
    }
    const f = parsed as Record<string, unknown>;
    let errors: string[] = [];
    if (typeof f.ok === "boolean") {
      const op = typeof f.request_id === "string" ? this.ops.get(f.request_id) : undefined;
      if (op !== undefined && isOpName(op)) errors = replyErrors(op, f);
      else if (f.ok !== false) errors = ["a success reply to an unknown request"];
      else
        errors = replyErrors("instance_ping", { ...f }).filter(
          (e) => !e.includes("is not a code of"),
        );
    } else if (f.ev === "topic") {
      errors = topicFrameErrors(f);
    } else {
      const schema = CONNECTION_EVENTS[f.ev as keyof typeof CONNECTION_EVENTS];
      errors =
        schema === undefined ? [`unknown event ${String(f.ev)}`] : validationErrors(schema, f);
    }
    if (errors.length > 0)
      contractViolations.push(`${line.slice(0, 300)}\n  ${errors.join("\n  ")}`);
  }

  request(op: string, args: Record<string, unknown> = {}): Promise<Reply> {
    const id = `p${this.ops.size + 1}`;
    this.ops.set(id, op);
    return this.client.send(op, args, id);
  }

  /** Send raw text; `ops` names its requests (request_id → op) so their
   * replies are validated too. */
  raw(text: string, ops: Record<string, string> = {}): void {
    for (const [id, op] of Object.entries(ops)) this.ops.set(id, op);
    this.client.sendRaw(text);
  }

  call<T = Record<string, unknown>>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.request(op, args).then((r) => {
      if (!r.ok)
        throw Object.assign(new Error(`${op}: ${r.error!.code}: ${r.error!.msg}`), {
          code: r.error!.code,
        });
      const { ok: _o, request_id: _r, ...rest } = r;
      return rest as T;
    });
  }

  helloSession(sid: string, meta: Record<string, unknown> = {}) {
    return this.call("hello", { role: "session", protocol_version: 3, sid, ...meta });
  }

  helloUser() {
    return this.call("hello", { role: "user", protocol_version: 3 });
  }

  /** Subscribe and resolve with the snapshot frame. */
  async subscribe(topic: string): Promise<Pushed> {
    const snap = this.next((p) => p.ev === "topic" && p.topic === topic && p.snapshot === true);
    await this.call("topic_subscribe", { topic });
    return snap;
  }

  /** The first frame already received or yet to come that matches, each
   * frame handed out once. */
  next(pred: (p: Pushed) => boolean, timeoutMs = 10_000): Promise<Pushed> {
    const seen = this.frames.find((p) => !this.taken.has(p) && pred(p));
    if (seen !== undefined) {
      this.taken.add(seen);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a frame")), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
      });
    });
  }

  /** Resolve when the connection closes. */
  closed(): Promise<void> {
    return new Promise((resolve) => {
      if (this.client.closed) resolve();
      else this.client.onClose(resolve);
    });
  }

  close(): void {
    this.client.close();
  }
}
