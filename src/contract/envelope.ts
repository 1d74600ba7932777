import {
  KindGuard,
  type Static,
  type TIntersect,
  type TObject,
  type TProperties,
  type TSchema,
  Type,
} from "@sinclair/typebox";
import { REQUEST_ID_MAX_CHARS } from "./constants.js";
import { ERROR_CODES } from "./errors.js";
import { InstanceId, Sid } from "./identifiers.js";
import { Text } from "./text.js";

// The envelope (contract §1.3–§1.7). A request is one flat object: the op's
// arguments sit beside the envelope fields, so request schemas are built by
// merging the two rather than nesting arguments under a key.
//
// Objects accept members they do not declare: within a generation only
// optional fields and whole ops may be added (§1.9), so an older reader must
// not refuse a newer writer's extra optional field. See
// docs/decisions/DR-0002-open-objects.md.

/** Echoed in every reply, so bounded: a longer one cannot be identified and
 * is refused `bad_request` (step 0). */
export const RequestId = Text({ minLength: 1, maxLength: REQUEST_ID_MAX_CHARS });

/** The identity a forwarding instance acts for; `sid` exactly when `role` is
 * `session`. */
export const Caller = Type.Union([
  Type.Object({ role: Type.Literal("session"), sid: Sid }, { additionalProperties: false }),
  Type.Object(
    { role: Type.Union([Type.Literal("user"), Type.Literal("instance")]) },
    { additionalProperties: false },
  ),
]);
export type Caller = Static<typeof Caller>;

/** Who a connection speaks for, settled once by `hello`: a session (with its
 * sid), a person, or a peer instance. */
export type Identity = { role: "session"; sid: Sid } | { role: "user" } | { role: "instance" };

function envelopeFields<Op extends string>(op: Op) {
  return {
    op: Type.Literal(op),
    request_id: RequestId,
    to_instance: Type.Optional(InstanceId),
    from_instance: Type.Optional(InstanceId),
    hops: Type.Optional(Type.Array(InstanceId)),
    caller: Type.Optional(Caller),
  };
}

/** The envelope fields alone, for any op: what step 0 of dispatch reads. */
export const RequestEnvelope = Type.Object({
  op: Type.String({ minLength: 1 }),
  request_id: RequestId,
  to_instance: Type.Optional(InstanceId),
  from_instance: Type.Optional(InstanceId),
  hops: Type.Optional(Type.Array(InstanceId)),
  caller: Type.Optional(Caller),
});
export type RequestEnvelope = Static<typeof RequestEnvelope>;

/** Names of the envelope members, which are not arguments of any op. */
export const ENVELOPE_FIELDS = Object.keys(RequestEnvelope.properties) as readonly string[];

type Envelope<Op extends string> = ReturnType<typeof envelopeFields<Op>>;

/** `<op> request` = envelope ∪ args, flat. Object args merge into one object
 * schema (fastest to check); a union of argument shapes becomes an
 * intersection. */
export function request<Op extends string, A extends TProperties>(
  op: Op,
  args: TObject<A>,
): TObject<Envelope<Op> & A>;
export function request<Op extends string, A extends TSchema>(
  op: Op,
  args: A,
): TIntersect<[TObject<Envelope<Op>>, A]>;
export function request(op: string, args: TSchema): TSchema {
  if (KindGuard.IsObject(args)) {
    return Type.Object({ ...envelopeFields(op), ...args.properties }, { title: `${op} request` });
  }
  return Type.Intersect([Type.Object(envelopeFields(op)), args], { title: `${op} request` });
}

const replyHead = { ok: Type.Literal(true), request_id: RequestId };

/** A success reply: `ok`, `request_id`, and the result fields at the top. */
export function response<R extends TProperties>(
  op: string,
  result: TObject<R>,
): TObject<typeof replyHead & R>;
export function response<R extends TSchema>(
  op: string,
  result: R,
): TIntersect<[TObject<typeof replyHead>, R]>;
export function response(op: string, result: TSchema): TSchema {
  if (KindGuard.IsObject(result)) {
    return Type.Object({ ...replyHead, ...result.properties }, { title: `${op} response` });
  }
  return Type.Intersect([Type.Object(replyHead), result], { title: `${op} response` });
}

export const ErrorCodeSchema = Type.Union(ERROR_CODES.map((c) => Type.Literal(c)));

/** The error body: a code from the closed list and a message for humans. For
 * `invalid_args` the message is the schema failures, one `path: message` per
 * line. */
export const ErrorBodySchema = Type.Object({ code: ErrorCodeSchema, msg: Type.String() });

/** A failure reply. `request_id` is left out only when the request could not be
 * identified (unparseable, or `op` / `request_id` missing). */
export const FailureReply = Type.Object({
  ok: Type.Literal(false),
  request_id: Type.Optional(RequestId),
  error: ErrorBodySchema,
});
export type FailureReply = Static<typeof FailureReply>;

/** A topic frame pushed by the instance. `topic` is the full subscribed name. */
export function topicFrame<T extends TSchema>(topicPattern: string, data: T) {
  return Type.Object({
    ev: Type.Literal("topic"),
    topic: Type.String({ pattern: topicPattern, description: "a topic name of this frame's kind" }),
    snapshot: Type.Optional(Type.Literal(true)),
    instance: InstanceId,
    data,
  });
}

// --- connection events (§1.7): pushed, not tied to a topic ---

/** The daemon is going down and will return on the same socket; reconnect. */
export const RestartingEvent = Type.Object({
  ev: Type.Literal("restarting"),
  instance: InstanceId,
});
/** Another connection took over this session's subscription. No `instance`:
 * it concerns only this connection. */
export const SubscribeSupersededEvent = Type.Object({ ev: Type.Literal("subscribe_superseded") });
/** The instance's view of the host's network link changed. */
export const NetOnlineEvent = Type.Object({
  ev: Type.Literal("net_online"),
  instance: InstanceId,
  online: Type.Boolean(),
});
export const CONNECTION_EVENTS = {
  restarting: RestartingEvent,
  subscribe_superseded: SubscribeSupersededEvent,
  net_online: NetOnlineEvent,
} as const;
export type ConnectionEvent =
  | Static<typeof RestartingEvent>
  | Static<typeof SubscribeSupersededEvent>
  | Static<typeof NetOnlineEvent>;
