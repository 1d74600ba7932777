import type { Identity } from "../../contract/envelope.js";
import type { ErrorBody } from "../../contract/errors.js";
import type { InstanceInfo } from "../../contract/peers.js";
import type { Connection } from "../wire/connection.js";

// What the rest of the instance sees of the mesh (contract §8, §8.1; DR-0047).
// The links (handshake, glare, heartbeat, reconnect) live behind this port;
// forwarding, the relay of per-instance topics and KV replication are built on
// it and never touch a socket themselves.

/** A reply as it came back over a link. */
export type LinkReply = { ok: true; result: unknown } | { ok: false; error: ErrorBody };

/** A topic frame as a peer sent it (passed on unchanged, `instance` kept). */
export interface RelayedFrame {
  topic: string;
  instance: string;
  data: unknown;
  snapshot?: boolean;
}

/** An instance-rule frame between two linked instances of this build: it has
 * a `mesh` member naming its kind and no `op`, `request_id` or `topic`, so it
 * can never be taken for a contract frame. */
export interface MeshFrame {
  mesh: string;
  [field: string]: unknown;
}

export interface MeshPort {
  /** This instance's id. */
  readonly id: string;
  /** Whether any peer is configured at all (no mesh: every method is inert). */
  readonly configured: boolean;
  /** Every instance known, this one first, reachability as seen from here
   * (`hello.instances`, `peers.instances`). */
  instances(): InstanceInfo[];
  /** Ids of the peers with a verified link now. */
  linked(): string[];
  /** Whether some configured peer has no verified link now (§7.7 step 1). */
  anyUnreachable(): boolean;
  /** The peer a connection is the verified link to, if it is one. */
  peerOf(conn: Connection): string | undefined;
  /**
   * Send a request (op, args and envelope fields; the port assigns its own
   * `request_id` and maps the reply back) to peer `to`. Rejects with
   * ContractError `instance_unreachable` when there is no verified link, the
   * link drops before the reply, or none came within `timeoutMs` (10 s).
   */
  request(to: string, frame: Record<string, unknown>, timeoutMs?: number): Promise<LinkReply>;
  /**
   * Hold a subscription to `topic` on every linked peer, made again each time
   * a link comes up, sent with `caller` (undefined: as the instance itself).
   * `onFrame(peer, frame)` gets each topic frame as received, the snapshot
   * first after every (re)subscribe. Returns a function that ends it.
   */
  relay(
    topic: string,
    caller: Identity | undefined,
    onFrame: (peer: string, frame: RelayedFrame) => void,
  ): () => void;
  /** Send an instance-rule frame to `to`; false (nothing queued) without a link. */
  send(to: string, frame: MeshFrame): boolean;
  /** Hear instance-rule frames of one kind. */
  onFrame(kind: string, handler: (from: string, frame: MeshFrame) => void): void;
  /** Hear verified links come up and links go down (after the port's own
   * bookkeeping, so `linked()` already reflects the change). `up` may come
   * again for a peer already up when its link was replaced (glare keeps the
   * other socket): whatever a new link needs, send it again. */
  onLink(listener: (peer: string, up: boolean) => void): void;
}
