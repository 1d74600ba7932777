import { PROTOCOL_VERSION } from "../../contract/constants.js";
import { encodeRequest } from "../../contract/frames.js";
import { INSTANCE_ID_PATTERN } from "../../contract/identifiers.js";
import type { Logger } from "../../util/logger.js";
import { VERSION } from "../../util/version.js";
import { Connection, type InboundHandler } from "../wire/connection.js";
import { dialLink } from "./dial.js";
import { CLOSE, HELLO_RID, parseObject } from "./frames.js";
import { MESH_VER, type OneOffKey, oneOffKey, PROOF_TTL_SECS, signProof } from "./jws.js";
import type { Peer } from "./peer-book.js";

// The dialer's side of the handshake (contract §8.1 steps 1, 2, 5; DR-0047):
// a one-off key per dial, the greeting, the key served once on this
// instance's own listener (C2) and the proof that follows it, then the ack.

const ID = new RegExp(INSTANCE_ID_PATTERN);
/** The key route's budget per source address (contract §1.1). */
const KEY_REQUESTS_PER_SECOND = 20;
const CHALLENGE = /^[A-Za-z0-9_-]{22,256}$/;

export interface DialerDeps {
  id: string;
  log: Logger;
  handshakeMs: number;
  endpoint(): string | undefined;
  /** Test hook: where the TCP connection for an endpoint goes. */
  dialTo(endpoint: string): string | undefined;
  /** What a dialed connection reads through (the mesh's handler). */
  inbound: InboundHandler;
  /** The ack came, naming `id` (and the peer's host when it said): a
   * refusal, or undefined once the link is up. */
  acknowledged(
    peer: Peer,
    conn: Connection,
    id: string,
    host: string | undefined,
  ): string | undefined;
  /** The dial failed; the mesh decides when to try again. */
  failed(peer: Peer, why: string): void;
}

interface Outgoing {
  peer: Peer;
  conn?: Connection;
  key?: OneOffKey;
  kid?: string;
  proofSent: boolean;
  timer: NodeJS.Timeout;
  done: boolean;
}

export class Dialer {
  private readonly attempts = new Map<Connection, Outgoing>();
  private readonly byPeer = new Map<Peer, Outgoing>();
  /** One-off keys served at `mesh/jwk/<kid>` while their dial lasts. */
  private readonly keys = new Map<string, Outgoing>();
  private readonly budget = new Map<string, { at: number; used: number }>();

  constructor(private readonly deps: DialerDeps) {}

  has(conn: Connection): boolean {
    return this.attempts.has(conn);
  }

  dialing(peer: Peer): boolean {
    return this.byPeer.has(peer);
  }

  async dial(peer: Peer): Promise<void> {
    const { handshakeMs } = this.deps;
    const out: Outgoing = {
      ...{ peer, proofSent: false, done: false },
      timer: setTimeout(() => this.fail(out, "the handshake timed out"), handshakeMs),
    };
    this.byPeer.set(peer, out);
    try {
      const key = await oneOffKey();
      if (out.done) return;
      out.key = key;
      out.kid = key.kid;
      this.keys.set(key.kid, out);
      const dialed = await dialLink(peer.endpoint, this.deps.dialTo(peer.endpoint), handshakeMs);
      if (out.done) {
        dialed.transport.writer.close(1000, "handshake abandoned");
        return;
      }
      const conn = new Connection(dialed.transport, this.deps.inbound);
      out.conn = conn;
      this.attempts.set(conn, out);
      conn.onClose(() =>
        this.fail(out, `closed (code ${dialed.closeCode() ?? "none"}) before the ack`),
      );
      const mesh = {
        ver: MESH_VER,
        iss: this.deps.endpoint(),
        aud: peer.endpoint,
        id: this.deps.id,
        kid: key.kid,
      };
      const greeting = {
        role: "instance",
        protocol_version: PROTOCOL_VERSION,
        client_version: VERSION,
        mesh,
      };
      conn.send(encodeRequest("hello", HELLO_RID, greeting));
    } catch (error) {
      this.fail(out, (error as Error).message || String(error));
    }
  }

  /** Answer `POST <endpoint>mesh/jwk/<kid>` with body `{challenge}`: the
   * public key, once; the proof follows on the dial's connection. */
  keyRequest(kid: string, body: unknown, ip: string | undefined): { status: number; body: object } {
    if (!this.allow(ip ?? "?"))
      return { status: 429, body: { ok: false, error: "too many key requests" } };
    const out = this.keys.get(kid);
    if (out === undefined || out.key === undefined || out.done)
      return { status: 404, body: { ok: false, error: "no such key" } };
    const challenge = (body as { challenge?: unknown } | null)?.challenge;
    if (typeof challenge !== "string" || !CHALLENGE.test(challenge)) {
      this.fail(out, "the key was asked for without a valid challenge");
      return {
        status: 400,
        body: { ok: false, error: "challenge: 22 to 256 base64url characters" },
      };
    }
    // One fetch per key: sign now, then forget the private half.
    const key = out.key;
    this.keys.delete(kid);
    out.key = undefined;
    const jws = signProof(key, {
      ver: MESH_VER,
      iss: this.deps.endpoint() ?? "",
      aud: out.peer.endpoint,
      challenge,
      exp: Math.floor(Date.now() / 1000) + PROOF_TTL_SECS,
    });
    out.proofSent = true;
    setImmediate(() => {
      if (!out.done) out.conn?.send(JSON.stringify({ mesh: "proof", jws }));
    });
    return { status: 200, body: key.jwk };
  }

  /** Before the ack only the greeting's reply may arrive. */
  frame(conn: Connection, line: string): void {
    const out = this.attempts.get(conn);
    if (out === undefined) return;
    const f = parseObject(line);
    if (f?.request_id !== HELLO_RID || typeof f.ok !== "boolean") {
      this.fail(out, "the peer spoke before the ack", CLOSE.refused);
      return;
    }
    if (f.ok !== true) {
      const msg = (f.error as { msg?: unknown } | undefined)?.msg;
      this.fail(out, `refused: ${typeof msg === "string" ? msg : "no reason given"}`);
      return;
    }
    const id = f.instance;
    const refusal = !out.proofSent
      ? "acknowledged without a proof"
      : typeof id !== "string" || !ID.test(id)
        ? "the ack names no instance id"
        : id === this.deps.id
          ? "the peer is this instance itself"
          : undefined;
    if (refusal !== undefined) {
      this.fail(out, refusal, CLOSE.refused);
      return;
    }
    const first = Array.isArray(f.instances)
      ? (f.instances[0] as { id?: unknown; host?: unknown } | undefined)
      : undefined;
    const host =
      first?.id === id && typeof first?.host === "string" && first.host !== ""
        ? first.host
        : undefined;
    this.finish(out);
    const refused = this.deps.acknowledged(out.peer, conn, id as string, host);
    if (refused !== undefined) {
      out.peer.lastError = refused;
      this.deps.log.info({ endpoint: out.peer.endpoint, why: refused }, "mesh dial failed");
      conn.close(CLOSE.refused, refused);
      this.deps.failed(out.peer, refused);
    }
  }

  /** End the dial to a peer (or every dial). */
  abandon(why: string, peer?: Peer): void {
    for (const out of [...this.byPeer.values()])
      if (!peer || out.peer === peer) this.fail(out, why);
  }

  private allow(ip: string): boolean {
    const now = Date.now();
    const b = this.budget.get(ip);
    if (b === undefined || now - b.at >= 1000) {
      if (this.budget.size > 4096) this.budget.clear();
      this.budget.set(ip, { at: now, used: 1 });
      return true;
    }
    return ++b.used <= KEY_REQUESTS_PER_SECOND;
  }

  /** The key and the attempt go, whatever the outcome. */
  private finish(out: Outgoing): void {
    out.done = true;
    clearTimeout(out.timer);
    if (out.kid !== undefined) this.keys.delete(out.kid);
    out.key = undefined;
    if (out.conn) this.attempts.delete(out.conn);
    if (this.byPeer.get(out.peer) === out) this.byPeer.delete(out.peer);
  }

  private fail(out: Outgoing, why: string, code = 1000): void {
    if (out.done) return;
    this.finish(out);
    this.deps.log.info({ endpoint: out.peer.endpoint, why }, "mesh dial failed");
    if (out.conn && !out.conn.isClosed) out.conn.close(code, why);
    this.deps.failed(out.peer, why);
  }
}
