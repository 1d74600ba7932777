import { type Static, Type } from "@sinclair/typebox";
import { INBOX_MAX_PER_SID, PROTOCOL_VERSION, TOPIC_NAME_MAX_CHARS } from "./constants.js";
import { type Identity, request, response } from "./envelope.js";
import type { ErrorBody } from "./errors.js";
import { Capability, Endpoint, InstanceId, Mid, Role, Sid, Timestamp } from "./identifiers.js";
import { ClientVersion, InstanceInfo, SessionMetaFields } from "./peers.js";
import { Text } from "./text.js";
import { Topic } from "./topics.js";
import { upstream } from "./upstream.js";

// The common plane (contract §4.3.1): connect, declare the end of a
// connection, subscribe.

/** The mesh half of an instance's greeting. Unsigned: the proof binding the
 * connection to `iss` follows in a separate exchange keyed by `kid`. */
export const MeshHello = Type.Object({
  ver: Type.Integer({ minimum: 1 }),
  /** The endpoint the dialer claims to be published at. */
  iss: Endpoint,
  /** The endpoint it believes it dials; compared whole with the receiver's. */
  aud: Endpoint,
  id: InstanceId,
  kid: Type.String({ minLength: 16 }),
});
export type MeshHello = Static<typeof MeshHello>;

/** The greeting that settles what a connection is.
 *
 * Which fields are required is decided by `role`, which no single object
 * schema can state, so `helloRoleViolations` checks it: `session` carries
 * `sid`; `user` carries no `sid`; `instance` carries `mesh`. A field of another
 * role is as much a refusal as a missing one — accepting it would settle the
 * connection as something neither side meant. */
export const HelloArgs = Type.Object({
  role: Role,
  /** The caller's generation; anything but PROTOCOL_VERSION is `bad_request`. */
  protocol_version: Type.Integer({ minimum: 1 }),
  sid: Type.Optional(Sid),
  mesh: Type.Optional(MeshHello),
  /** Client build, for display only. */
  client_version: Type.Optional(ClientVersion),
  repo: Type.Optional(SessionMetaFields.repo),
  ws: Type.Optional(SessionMetaFields.ws),
  cwd: Type.Optional(SessionMetaFields.cwd),
  transcript_path: Type.Optional(SessionMetaFields.transcript_path),
  repo_root: Type.Optional(SessionMetaFields.repo_root),
  branch: Type.Optional(SessionMetaFields.branch),
  title: Type.Optional(SessionMetaFields.title),
  model: Type.Optional(SessionMetaFields.model),
  effort: Type.Optional(SessionMetaFields.effort),
});
export type HelloArgs = Static<typeof HelloArgs>;

export const HelloResult = Type.Object({
  protocol_version: Type.Integer({ minimum: 1 }),
  /** The answering instance; other ids in the reply are relative to it. */
  instance: InstanceId,
  /** Absent when it belongs to no mesh. */
  endpoint: Type.Optional(Endpoint),
  /** Every instance it knows, itself included. */
  instances: Type.Array(InstanceInfo),
  capabilities: Type.Array(Capability),
  /** Daemon build, display only. */
  version: Type.String(),
  started_at: Timestamp,
  /** Base URL of the gateway in front of this instance's terminals, no
   * trailing slash. Absent exactly when `terminal` is. */
  terminal_gateway: Type.Optional(
    Type.String({
      pattern: "^https?://[^/?#\\s]+(/[^?#\\s]*[^/?#\\s])?$",
      description: "an http(s) URL without query, fragment or trailing /",
    }),
  ),
  /** When an access token opened the connection: the instant the instance
   * closes it unless `auth_refresh` moves it. */
  auth_expires_at: Type.Optional(Timestamp),
});
export type HelloResult = Static<typeof HelloResult>;

export const HelloRequest = request("hello", HelloArgs);
export const HelloResponse = response("hello", HelloResult);

/** The role rules of `hello` (§4.3.1), as `path: message` lines; empty when the
 * greeting is well-formed. The schema has already passed. */
export function helloRoleViolations(args: HelloArgs): string[] {
  const out: string[] = [];
  const has = (k: "sid" | "mesh") => args[k] !== undefined;
  switch (args.role) {
    case "session":
      if (!has("sid")) out.push("/sid: required when role is session");
      if (has("mesh")) out.push("/mesh: not allowed when role is session");
      break;
    case "user":
      if (has("sid"))
        out.push("/sid: not allowed when role is user (a person speaks for no one session)");
      if (has("mesh")) out.push("/mesh: not allowed when role is user");
      break;
    case "instance":
      if (!has("mesh")) out.push("/mesh: required when role is instance");
      if (has("sid")) out.push("/sid: not allowed when role is instance");
      break;
  }
  return out;
}

/**
 * Every rule of `hello` beyond its schema, in the order dispatch applies them
 * (§1.8, §4.3.1): a connection greets once and in this generation
 * (`bad_request`: the frame cannot be taken at all), and the fields match the
 * role (`invalid_args`). The one place these rules live.
 */
export function helloRefusal(args: HelloArgs, greeted: boolean): ErrorBody | undefined {
  if (greeted) return { code: "bad_request", msg: "this connection has already greeted" };
  if (args.protocol_version !== PROTOCOL_VERSION) {
    return {
      code: "bad_request",
      msg: `generation ${String(args.protocol_version)} is not spoken here (this instance speaks ${PROTOCOL_VERSION})`,
    };
  }
  const broken = helloRoleViolations(args);
  return broken.length > 0 ? { code: "invalid_args", msg: broken.join("\n") } : undefined;
}

/** The identity a well-formed greeting settles. */
export function helloIdentity(args: HelloArgs): Identity {
  if (args.role !== "session") return { role: args.role };
  if (args.sid === undefined) throw new Error("a session greeting without sid passed the rules");
  return { role: "session", sid: args.sid };
}

// --- instance_ping ---

export const InstancePingArgs = Type.Object({});
export const InstancePingResult = Type.Object({
  instance: InstanceId,
  version: Type.String(),
  pid: Type.Integer({ minimum: 1 }),
  started_at: Timestamp,
  /** Clients connected now. */
  clients: Type.Integer({ minimum: 0 }),
  /** Interpreter path. */
  exe: Type.Optional(Type.String()),
  /** Entry script. With `exe`, tells apart two instances on one host when one
   * runs a stale build. */
  script: Type.Optional(Type.String()),
  /** Bound HTTP/WS addresses as `host:port`; empty when HTTP is off. */
  http: Type.Array(Type.String()),
  network: Type.Union([
    Type.Literal("off"),
    Type.Literal("unknown"),
    Type.Literal("online"),
    Type.Literal("offline"),
  ]),
});
export type InstancePingResult = Static<typeof InstancePingResult>;
export const InstancePingRequest = request("instance_ping", InstancePingArgs);
export const InstancePingResponse = response("instance_ping", InstancePingResult);

// --- instance_shutdown ---

/** The reply is written before the process goes down. */
export const InstanceShutdownArgs = Type.Object({});
export const InstanceShutdownResult = Type.Object({});
export const InstanceShutdownRequest = request("instance_shutdown", InstanceShutdownArgs);
export const InstanceShutdownResponse = response("instance_shutdown", InstanceShutdownResult);

// --- session_stopping ---

/** A session saying it is about to go, so its disconnection reads as a pause
 * rather than a loss. The instance holds the declaration until the disconnect
 * arrives: the two are one event in that order however long the exit takes,
 * and a session that carries on stays connected and unchanged. */
export const SessionStoppingArgs = Type.Object({
  /** Why, for display: normally the harness's own end-of-session reason in its
   * spelling. Nothing gates on the value. */
  reason: Type.Optional(
    Type.String({
      minLength: 1,
      ...upstream("claude", "the session-end reason, in the harness's spelling"),
    }),
  ),
});
export type SessionStoppingArgs = Static<typeof SessionStoppingArgs>;
export const SessionStoppingResult = Type.Object({
  /** The instant recorded, as it will appear on the `last_live` row — stamped
   * by the clock the row is read against. */
  stopped_at: Timestamp,
});
export const SessionStoppingRequest = request("session_stopping", SessionStoppingArgs);
export const SessionStoppingResponse = response("session_stopping", SessionStoppingResult);

// --- topic_subscribe / topic_unsubscribe ---

/** The reply only acknowledges; the value arrives as the first topic frame
 * (`snapshot: true`, except for `notify`). */
/** Any non-empty name, bounded because it is echoed: whether it names a topic
 * of this generation is the handler's question, answered `topic_unknown` (not
 * `invalid_args`), so a client can tell "no such topic" from a malformed
 * request. */
const TopicName = Text({ minLength: 1, maxLength: TOPIC_NAME_MAX_CHARS });

/**
 * Hand-over subscriptions (this implementation's extension, optional fields
 * as §1.9 allows; docs/decisions/DR-0024-hand-over.md). A session's `inbox`
 * subscribed with `hand_over` receives messages *claimed* rather than taken:
 * they stay held until the subscriber names them in `topic_unsubscribe`'s
 * `handed_over`, which it does once it has passed them on (a hook writing them
 * for its harness). A claim that is never confirmed — the subscriber was
 * killed, superseded, or left without naming it — returns to the inbox.
 * `wait`: the session's inbox receiver (a waiter), snapshot and new messages;
 * `take`: the snapshot only, beside whichever connection receives.
 */
export const HAND_OVER_MODES = ["wait", "take"] as const;
export type HandOverMode = (typeof HAND_OVER_MODES)[number];
export const HandOverMode = Type.Union(HAND_OVER_MODES.map((m) => Type.Literal(m)));

export const TopicSubscribeArgs = Type.Object({
  topic: TopicName,
  /** Extension: claim inbox messages until confirmed (only with `inbox`). */
  hand_over: Type.Optional(HandOverMode),
});
export const TopicSubscribeResult = Type.Object({ topic: Topic });
export const TopicSubscribeRequest = request("topic_subscribe", TopicSubscribeArgs);
export const TopicSubscribeResponse = response("topic_subscribe", TopicSubscribeResult);

export const TopicUnsubscribeArgs = Type.Object({
  topic: TopicName,
  /** Extension: the claimed messages this subscriber passed on (only with
   * `inbox`); confirmed all or none. */
  handed_over: Type.Optional(Type.Array(Mid, { maxItems: INBOX_MAX_PER_SID })),
});
export const TopicUnsubscribeResult = Type.Object({
  topic: Topic,
  /** Extension: the messages now recorded delivered — all those named, or
   * none (empty) when one of them was no longer this subscriber's claim. */
  handed_over: Type.Optional(Type.Array(Mid)),
});
export const TopicUnsubscribeRequest = request("topic_unsubscribe", TopicUnsubscribeArgs);
export const TopicUnsubscribeResponse = response("topic_unsubscribe", TopicUnsubscribeResult);
