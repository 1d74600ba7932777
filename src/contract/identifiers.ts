import { type Static, Type } from "@sinclair/typebox";
import { USER_SENDER } from "./constants.js";
import {
  BASE64URL_PATTERN,
  ENDPOINT_PATTERN,
  INSTANCE_ID_PATTERN,
  MID_MAX_CHARS,
  MID_PATTERN,
  NAMESPACE_PATTERN,
  SID_DESCRIPTION,
  SID_PATTERN,
  TRANSCRIPT_ITEM_ID_PATTERN,
  TRANSCRIPT_ITEM_SELECTOR_PATTERN,
  TRANSCRIPT_ITEM_TYPE_PATTERN,
} from "./ids.js";
import { Text } from "./text.js";

// Identifiers and scalar types (contract §2): the schemas over the patterns
// and predicates of ids.ts, which code without schemas imports directly.
export * from "./ids.js";

/** The harness session id (Claude Code session id; Codex thread id): a lowercase
 * UUID, unique across the mesh and never prefixed by an instance. */
// Each patterned type describes its form in words: an `invalid_args` message
// quotes the description, never the pattern (validate.ts).
export const Sid = Type.String({
  pattern: SID_PATTERN,
  description: SID_DESCRIPTION,
});
export type Sid = Static<typeof Sid>;

/** Who sent a message: a sid, or `"user"` for a person. Spelled out rather than
 * left absent so "a person sent this" cannot be confused with "the sid got
 * lost"; every sid stays a valid sender. Nothing can be addressed to `"user"`. */
export const Sender = Type.Union([Sid, Type.Literal(USER_SENDER)], { $id: "Sender" });
export type Sender = Static<typeof Sender>;

/** 16 random bytes minted once by an instance and kept for life, also across a
 * move to another host: everything that must survive a move is keyed by it. */
export const InstanceId = Type.String({
  pattern: INSTANCE_ID_PATTERN,
  description: "an instance id is 32 lower-case hex digits",
});
export type InstanceId = Static<typeof InstanceId>;

/** Where an instance is published and dialed, compared as a whole string. */
export const Endpoint = Type.String({
  pattern: ENDPOINT_PATTERN,
  description:
    "an endpoint is an http(s) URL with a lower-case host, ending in / and without query or fragment",
});
export type Endpoint = Static<typeof Endpoint>;

/** Id of one delivery frame, `<InstanceId>/<counter>`. Not a cursor: there is no
 * ordering across instances. */
export const Mid = Type.String({
  pattern: MID_PATTERN,
  maxLength: MID_MAX_CHARS,
  description: "a message id is <instance id>/<number>",
});
export type Mid = Static<typeof Mid>;

export const ROLES = ["session", "user", "instance"] as const;
/** Settled once per connection by `hello` and fixed for its life. */
export const Role = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { $id: "Role" },
);
export type Role = (typeof ROLES)[number];

export const CAPABILITIES = [
  "fork",
  "launcher",
  "llm_events",
  "llm_stats",
  "llm_status",
  "llm_usage",
  "sandbox",
  "terminal",
  "translate",
] as const;
export const Capability = Type.Union(CAPABILITIES.map((c) => Type.Literal(c)));
export type Capability = (typeof CAPABILITIES)[number];

/** Every instant on the wire: integer Unix milliseconds. */
export const Timestamp = Type.Integer({ minimum: 0 });
export type Timestamp = Static<typeof Timestamp>;

export const Namespace = Type.String({
  pattern: `^${NAMESPACE_PATTERN}$`,
  description:
    "a namespace is a lower-case letter, then up to 63 lower-case letters, digits or underscores",
});
export type Namespace = Static<typeof Namespace>;

/** 1–256 code points without control characters U+0000–U+001F. */
export const KvKey = Text({
  minLength: 1,
  maxLength: 256,
  pattern: "^[^\\u0000-\\u001f]*$",
  description: "a key is 1 to 256 characters without control characters",
});
export type KvKey = Static<typeof KvKey>;

export const Base64Url = Type.String({
  minLength: 1,
  pattern: BASE64URL_PATTERN,
  description: "base64url text: letters, digits, - and _",
});
export type Base64Url = Static<typeof Base64Url>;

/** A person's id in auth records; `<unit>-<counter>` by default. */
export const Subject = Text({ minLength: 1, maxLength: 128 });
export type Subject = Static<typeof Subject>;

export const TranscriptItemId = Type.String({
  pattern: TRANSCRIPT_ITEM_ID_PATTERN,
  description: "a transcript item id is <source>:<number>",
});
export type TranscriptItemId = Static<typeof TranscriptItemId>;
export const TranscriptItemType = Type.String({
  pattern: TRANSCRIPT_ITEM_TYPE_PATTERN,
  description: "an item type is a lower-case family and :-separated names, e.g. tool:Bash",
});
export type TranscriptItemType = Static<typeof TranscriptItemType>;
export const TranscriptItemSelector = Type.String({
  pattern: TRANSCRIPT_ITEM_SELECTOR_PATTERN,
  description:
    "a selector is an item type (e.g. tool:Bash) or @<agent>, with - before it to exclude",
});
export type TranscriptItemSelector = Static<typeof TranscriptItemSelector>;

/** A non-empty string, the most common argument shape. */
export const NonEmpty = Type.String({ minLength: 1 });
