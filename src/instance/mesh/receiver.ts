import type { Logger } from "../../util/logger.js";
import type { Connection } from "../wire/connection.js";
import { fetchKey } from "./dial.js";
import { type Claim, parseObject } from "./frames.js";
import { MESH_VER, randomToken, verifyProof } from "./jws.js";
import type { Peer } from "./peer-book.js";

// The receiver's side of the handshake (contract §8.1 steps 3–7; DR-0047):
// the claim's checks, the key fetched from the dialer's own listener with a
// fresh challenge, the proof checked against both. Nothing is kept once a
// handshake ends, whatever its outcome.

/** Where the receiver stands, for the claim's checks. */
export interface ClaimContext {
  id: string;
  endpoint: string | undefined;
  /** Why there is no endpoint. */
  inert: string | undefined;
  peers: ReadonlyMap<string, Peer>;
}

/** Step 3 and the bindings, before any key is fetched: a refusal, or the
 * listed peer the claim names. */
export function claimRefusal(claim: Claim, ctx: ClaimContext): string | { peer: Peer } {
  if (claim.ver !== MESH_VER)
    return `mesh handshake ver ${claim.ver} is not spoken here (${MESH_VER} is)`;
  if (ctx.endpoint === undefined) return `this instance is in no mesh: ${ctx.inert}`;
  if (claim.aud !== ctx.endpoint) return "aud is not this instance's endpoint";
  const peer = ctx.peers.get(claim.iss);
  if (peer === undefined) return "iss is not in this instance's endpoints list";
  if (claim.id === ctx.id) return "that id is this instance's own";
  if (peer.configuredId !== undefined && claim.id !== peer.configuredId)
    return "the id is not the one listed for iss";
  return bindingRefusal(ctx.peers, peer, claim.id) ?? { peer };
}

/** One id, one link: an id bound to another endpoint — by a link that is
 * up, or by the row that lists it — stays there. */
export function bindingRefusal(
  peers: ReadonlyMap<string, Peer>,
  peer: Peer,
  id: string,
): string | undefined {
  for (const other of peers.values())
    if (
      other !== peer &&
      ((other.id === id && other.link !== undefined) || other.configuredId === id)
    )
      return `instance ${id} is already bound to ${other.endpoint}`;
  if (peer.link !== undefined && peer.id !== undefined && peer.id !== id)
    return `${peer.endpoint} is linked as instance ${peer.id}`;
  return undefined;
}

export interface ReceiverDeps {
  log: Logger;
  handshakeMs: number;
  /** Test hook: where the TCP connection for an endpoint goes. */
  dialTo(endpoint: string): string | undefined;
  claimRefusal(claim: Claim): string | { peer: Peer };
  /** The proof passed: the greeting (`line`) goes on, its reply is the ack. */
  verified(conn: Connection, peer: Peer, id: string, line: string): void;
  /** Close a connection that broke the rules (with a refusal when it can be answered). */
  refuse(conn: Connection, requestId: string | undefined, why: string): void;
  endpoint(): string | undefined;
}

interface Incoming {
  conn: Connection;
  peer: Peer;
  claim: Claim;
  line: string;
  requestId: string;
  challenge: string;
  jwk?: unknown;
  proof?: unknown;
  timer: NodeJS.Timeout;
  done: boolean;
}

export class Receiver {
  private readonly incoming = new Map<Connection, Incoming>();

  constructor(private readonly deps: ReceiverDeps) {}

  has(conn: Connection): boolean {
    return this.incoming.has(conn);
  }

  /** A greeting passed dispatch's admission and the claim's checks: fetch
   * the key with a fresh challenge, and wait for the proof. */
  begin(conn: Connection, peer: Peer, claim: Claim, line: string, requestId: string): void {
    const { handshakeMs } = this.deps;
    const hs: Incoming = {
      ...{ conn, peer, claim, line, requestId, done: false },
      challenge: randomToken(32),
      timer: setTimeout(() => this.fail(hs, "the handshake timed out"), handshakeMs),
    };
    this.incoming.set(conn, hs);
    conn.onClose(() => this.fail(hs, "closed during the handshake"));
    fetchKey(claim.iss, claim.kid, hs.challenge, this.deps.dialTo(claim.iss), handshakeMs).then(
      (jwk) => {
        hs.jwk = jwk;
        this.tryVerify(hs);
      },
      (error: Error) => this.fail(hs, `the key could not be fetched: ${error.message}`),
    );
  }

  /** Before the ack only one frame may come: the proof. */
  frame(conn: Connection, line: string): void {
    const hs = this.incoming.get(conn);
    if (hs === undefined) return;
    const f = parseObject(line);
    const isProof =
      f?.mesh === "proof" &&
      f.op === undefined &&
      f.request_id === undefined &&
      Object.keys(f).length === 2;
    if (!isProof || hs.proof !== undefined) {
      this.fail(hs, "a frame other than the proof before the ack");
      return;
    }
    hs.proof = f.jws;
    this.tryVerify(hs);
  }

  /** End every handshake (with a peer, or all of them). */
  failAll(why: string, peer?: Peer): void {
    for (const hs of [...this.incoming.values()]) if (!peer || hs.peer === peer) this.fail(hs, why);
  }

  private tryVerify(hs: Incoming): void {
    if (hs.done || hs.jwk === undefined || hs.proof === undefined) return;
    const verdict = verifyProof(hs.proof, {
      kid: hs.claim.kid,
      jwk: hs.jwk,
      iss: hs.claim.iss,
      aud: this.deps.endpoint() ?? "",
      challenge: hs.challenge,
      now: Date.now(),
    });
    if (!verdict.ok) {
      this.fail(hs, verdict.why);
      return;
    }
    // The state may have moved while the key was fetched.
    const again = this.deps.claimRefusal(hs.claim);
    if (typeof again === "string") {
      this.fail(hs, again);
      return;
    }
    this.finish(hs);
    this.deps.verified(hs.conn, hs.peer, hs.claim.id, hs.line);
  }

  /** The challenge and the key go with the handshake. */
  private finish(hs: Incoming): void {
    hs.done = true;
    clearTimeout(hs.timer);
    this.incoming.delete(hs.conn);
    hs.jwk = undefined;
    hs.challenge = "";
  }

  private fail(hs: Incoming, why: string): void {
    if (hs.done) return;
    this.finish(hs);
    hs.peer.lastError = `refused a greeting: ${why}`;
    if (!hs.conn.isClosed) this.deps.refuse(hs.conn, hs.requestId, why);
  }
}
