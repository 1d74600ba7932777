import type { TSchema } from "@sinclair/typebox";
import { OP_ATTRIBUTES, OP_NAMES, type OpName } from "../../contract/attributes.js";
import { CANDIDATES_MAX } from "../../contract/constants.js";
import type { Identity } from "../../contract/envelope.js";
import { contractError, type ErrorBody } from "../../contract/errors.js";
import { SID_PATTERN } from "../../contract/identifiers.js";
import type { MessageSendResult } from "../../contract/messaging.js";
import type { CandidateSession } from "../../contract/peers.js";
import { OP_SCHEMAS } from "../../contract/schemas.js";
import type { OwnerIndex } from "./owners.js";
import type { MeshPort } from "./port.js";

/** How long a forwarded op waits for its reply (contract §8.1). */
export const FORWARD_TIMEOUT_MS = 10_000;

/** The instance-local ops whose subject is a session: their request names
 * it as a required `sid` of the Sid type. Read from the schemas, so an op
 * added with a subject sid is forwarded without a second list to update
 * (`session_search`'s `sid` is a substring, not a Sid, and stays local). */
export const SUBJECT_SID_OPS: ReadonlySet<OpName> = new Set(
  OP_NAMES.filter(
    (op) =>
      OP_ATTRIBUTES[op].locality === "instance-local" &&
      namesSubjectSid(OP_SCHEMAS[op].request as TSchema),
  ),
);

function namesSubjectSid(schema: TSchema): boolean {
  if (Array.isArray(schema.allOf)) return (schema.allOf as TSchema[]).some(namesSubjectSid);
  const sid = (schema.properties as Record<string, TSchema> | undefined)?.sid;
  return (
    sid?.pattern === SID_PATTERN &&
    (schema.required as string[] | undefined)?.includes("sid") === true
  );
}

/** Where a request goes: handled here, forwarded to a peer, refused, or —
 * for `message_send` — decided by its addressee's owner once who runs was
 * read (`messageSend`). */
export type Route = undefined | { to: string } | { addressee: string } | ErrorBody;

/** What forwarding reads of the local sessions. */
export interface LocalSessions {
  /** `live` when connected here, `lost` when only a last_live row is. */
  localState(sid: string): "live" | "lost" | undefined;
  /** Whether a connection of the session is open here (live may also mean a
   * running harness process without one). */
  connected(sid: string): boolean;
  /** Read who runs from the harness's files (presence, DR-0025). */
  fresh(): Promise<void>;
}

/** The mesh fields of a request arriving here. */
interface Envelope {
  to_instance?: unknown;
  hops?: unknown;
  caller?: unknown;
  request_id?: unknown;
  [field: string]: unknown;
}

/**
 * Stage 6 of dispatch and `message_send`'s first step (contract §1.8, §7.7,
 * §8): decides whether a request is another instance's to answer and carries
 * it there over the mesh with the envelope fields set — `from_instance` this
 * instance, `hops` grown by it, `caller` the identity it arrived with — and
 * brings the reply back unchanged. Knows no socket: the port carries it.
 */
export class Forwarder {
  constructor(
    private readonly mesh: MeshPort,
    private readonly owners: OwnerIndex,
    private readonly sessions: LocalSessions,
  ) {}

  /**
   * The owning instance of `sid` (§8.1): connected here, else connected to a
   * peer (its `peers` rows), else lost here, else a peer's last_live or
   * `agents` rows. Undefined: no instance this one hears of knows it.
   */
  ownerOf(sid: string): string | undefined {
    const local = this.sessions.localState(sid);
    if (local === "live") return this.mesh.id;
    const remote = this.owners.liveOwner(sid);
    if (remote !== undefined) return remote;
    if (local === "lost") return this.mesh.id;
    return this.owners.otherOwner(sid);
  }

  /** Whether a peer lists `sid` as connected and this instance does not. */
  liveElsewhere(sid: string): boolean {
    return this.sessions.localState(sid) !== "live" && this.owners.liveOwner(sid) !== undefined;
  }

  /** Stage 6 for an admitted request: undefined to handle it here. */
  route(op: OpName, frame: Envelope): Route {
    if (op === "message_send" && typeof frame.to === "string") return { addressee: frame.to };
    if (OP_ATTRIBUTES[op].locality !== "instance-local") return undefined;
    const hops = hopsOf(frame);
    let to: string | undefined;
    // Addressed to this instance: answered here, wherever its sid lives.
    if (frame.to_instance === this.mesh.id) return undefined;
    if (typeof frame.to_instance === "string") {
      to = frame.to_instance;
      // Sent back to where it already was: the receiving side drops such a
      // request, so it would only time out. Say so now.
      if (hops.includes(to))
        return { code: "instance_unreachable", msg: `instance ${to} was already passed through` };
    } else if (SUBJECT_SID_OPS.has(op) && typeof frame.sid === "string") {
      const owner = this.ownerOf(frame.sid);
      // Unknown everywhere, ours, or where it came from: answered here (an
      // unknown sid stays `session_not_found` and the like).
      if (owner === undefined || owner === this.mesh.id || hops.includes(owner)) return undefined;
      to = owner;
    } else return undefined;
    if (!this.mesh.linked().includes(to))
      return { code: "instance_unreachable", msg: `no link to instance ${to}` };
    return { to };
  }

  /**
   * Carry `frame` to `to` and return its reply's result; a failure there is
   * rethrown as the same contract error, so the caller hears exactly what the
   * owner said. Rejects `instance_unreachable` without a reply in 10 s.
   */
  async forward(to: string, frame: Envelope, caller: Identity | undefined): Promise<object> {
    const reply = await this.mesh.request(to, this.envelope(frame, caller), FORWARD_TIMEOUT_MS);
    if (reply.ok) return (reply.result ?? {}) as object;
    throw contractError(reply.error.code, reply.error.msg);
  }

  /** The frame as it leaves: the port assigns its own request_id. */
  private envelope(frame: Envelope, caller: Identity | undefined): Record<string, unknown> {
    const { request_id: _r, caller: _c, from_instance: _f, hops: _h, ...rest } = frame;
    const out: Record<string, unknown> = {
      ...rest,
      from_instance: this.mesh.id,
      hops: [...hopsOf(frame), this.mesh.id],
    };
    if (caller !== undefined) out.caller = caller;
    return out;
  }

  /**
   * `message_send`, step 1 of §7.7 (a cluster op, still carried to the owner
   * of its addressee): the owner's reply as-is; `instance_unreachable` held
   * nowhere when the owner cannot be reached, or when the addressee is
   * unknown while some instance is out of reach. Undefined: answer here.
   * An addressee connected neither here nor to a peer may still run (or
   * have ended): who runs is read first, so the owner is decided on it and
   * the handler answers from it (DR-0025). A connected one costs no read.
   */
  async messageSend(
    frame: Envelope & { to: string },
    caller: Identity | undefined,
  ): Promise<MessageSendResult | undefined> {
    if (!this.sessions.connected(frame.to) && !this.liveElsewhere(frame.to))
      await this.sessions.fresh();
    const owner = this.ownerOf(frame.to);
    if (owner === this.mesh.id) return undefined;
    if (owner === undefined || hopsOf(frame).includes(owner))
      return this.mesh.anyUnreachable() ? UNREACHABLE : undefined;
    try {
      // The owner's reply, as it gave it.
      return (await this.forward(owner, frame, caller)) as MessageSendResult;
    } catch (error) {
      if ((error as { code?: unknown }).code === "instance_unreachable") return UNREACHABLE;
      throw error;
    }
  }

  /** Live sessions on peers in the same repository (`root`). */
  candidates(root: string, except: string, local: CandidateSession[]): CandidateSession[] {
    if (!root || local.length >= CANDIDATES_MAX) return local;
    return [...local, ...this.owners.nearby(root, except, CANDIDATES_MAX - local.length)];
  }
}

const UNREACHABLE: MessageSendResult = { delivered: false, reason: "instance_unreachable" };

function hopsOf(frame: Envelope): string[] {
  return Array.isArray(frame.hops) ? (frame.hops as string[]) : [];
}
