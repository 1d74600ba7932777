import type { Capability, Role } from "./identifiers.js";
import { NAMESPACE_PATTERN } from "./ids.js";

// Topic kinds and names without their schema: a client that folds frames
// must not load the schema library (topics.ts adds the schema).

/** How a subscriber folds a frame into what it already holds.
 *
 * Snapshot and delta share one payload type, which leaves one question the
 * shape cannot answer: what a later frame does to the value before it. The
 * granularity answers it, so the instance, the web console and the tests fold
 * the same way instead of each keeping its own table. */
export const TOPIC_GRANULARITIES = [
  /** The frame is the whole value; it replaces everything held. */
  "whole",
  /** The frame is the whole of what its `instance` knows; it replaces that
   * instance's entries and leaves every other instance's alone. */
  "per_instance_whole",
  /** The frame carries the elements that changed, keyed by their own id.
   * Elements not mentioned are untouched, so a removal is a marked element. */
  "element",
  /** The frame carries what was added since the previous one; append, never
   * rewrite. */
  "append",
  /** An occurrence, not a value: nothing is held and there is no snapshot. */
  "event",
] as const;
export type TopicGranularity = (typeof TOPIC_GRANULARITIES)[number];

/** For `element` topics: where the elements sit in `data` (absent = `data` is
 * the array), which member is their id, and which member marks a removal. */
export interface ElementShape {
  readonly list?: string;
  readonly id: string;
  readonly removal?: string;
}

/** For `append` topics: the array member that grows, and the members whose
 * first value stays (e.g. the offset the held lines start at). */
export interface AppendShape {
  readonly list: string;
  readonly keepFirst?: readonly string[];
}

export interface TopicAttributes {
  readonly roles: readonly Role[];
  readonly capability?: Capability;
  readonly granularity: TopicGranularity;
  /** What follows the `:` in a subscribed name, if anything. */
  readonly param?: "sid" | "ns";
  /** The bare name is a topic too (a person's view of every session's). */
  readonly bare?: true;
  readonly elements?: ElementShape;
  readonly append?: AppendShape;
  /** `per_instance_whole` members that, when absent from a frame, keep the
   * value held for that instance ("absent = no view stated, keep what you
   * had", as `peers.instances`). */
  readonly keepWhenAbsent?: readonly string[];
  /** Not part of wire generation 3: this implementation's documented
   * extension (a generation-3 peer that does not know it answers
   * `topic_unknown`, which is what it should). */
  readonly extension?: true;
}

const AGENT_AND_USER = ["session", "user"] as const;
const USER_ONLY = ["user"] as const;

/**
 * Who may subscribe to what, and how its frames fold (contract §5.2). The same
 * question the op table answers for ops: a role outside the set → `forbidden`,
 * a capability the instance lacks → `capability_unavailable`.
 */
export const TOPIC_ATTRIBUTES = {
  inbox: {
    roles: AGENT_AND_USER,
    granularity: "element",
    // Generation 3 inbox elements carry no removal marker (§12).
    elements: { id: "mid" },
  },
  notify: { roles: AGENT_AND_USER, granularity: "event" },
  peers: {
    roles: AGENT_AND_USER,
    granularity: "per_instance_whole",
    keepWhenAbsent: ["instances"],
  },
  agents: { roles: USER_ONLY, granularity: "per_instance_whole" },
  session_errors: { roles: USER_ONLY, granularity: "per_instance_whole" },
  llm_requests: { roles: USER_ONLY, capability: "llm_events", granularity: "per_instance_whole" },
  llm_status: { roles: USER_ONLY, capability: "llm_status", granularity: "per_instance_whole" },
  // One session lives on one instance, so its status has no other instance's
  // half to leave alone: the frame is simply the whole of it.
  session_status: { roles: USER_ONLY, granularity: "whole", param: "sid" },
  transcript: {
    roles: USER_ONLY,
    granularity: "append",
    param: "sid",
    append: { list: "lines", keepFirst: ["start"] },
  },
  transcript_items: {
    roles: USER_ONLY,
    granularity: "append",
    param: "sid",
    append: { list: "items" },
  },
  kv: {
    roles: USER_ONLY,
    granularity: "element",
    param: "ns",
    elements: { list: "entries", id: "key", removal: "deleted" },
  },
  // The only topic no person may hold: it carries credentials and tokens.
  // Tombstones are elements of their own (they refuse later writes), so no
  // removal marker deletes a held record.
  auth_records: {
    roles: ["instance"],
    granularity: "element",
    elements: { list: "records", id: "key" },
  },
  // Extension: the work board, live. A removal is a marked element.
  work_items: {
    roles: USER_ONLY,
    granularity: "element",
    elements: { list: "items", id: "id", removal: "deleted" },
    extension: true,
  },
  // Extension (DR-0054): what became of each message. `receipts` is every
  // message's (a person's), `receipts:<sid>` a session's own sends.
  receipts: {
    roles: AGENT_AND_USER,
    granularity: "element",
    param: "sid",
    bare: true,
    elements: { list: "receipts", id: "mid" },
    extension: true,
  },
  // Extension (DR-0062): the attention queue, every item that changed (an
  // ended item is an element like a pending one: the console keeps it). A
  // person's: a session reads the queue only through its ops, with a grant.
  attention: {
    roles: USER_ONLY,
    granularity: "element",
    elements: { list: "items", id: "id" },
    extension: true,
  },
} as const satisfies Record<string, TopicAttributes>;

export type TopicKind = keyof typeof TOPIC_ATTRIBUTES;
/** Every kind this implementation serves, extensions included. */
export const TOPIC_KINDS = Object.keys(TOPIC_ATTRIBUTES) as readonly TopicKind[];
/** The twelve kinds of wire generation 3. */
export const GENERATION_TOPIC_KINDS = TOPIC_KINDS.filter(
  (k) => (TOPIC_ATTRIBUTES[k] as TopicAttributes).extension !== true,
);

const PLAIN = TOPIC_KINDS.filter(
  (k) => !("param" in TOPIC_ATTRIBUTES[k]) || (TOPIC_ATTRIBUTES[k] as TopicAttributes).bare,
);
const SESSION_SCOPED = TOPIC_KINDS.filter(
  (k) => (TOPIC_ATTRIBUTES[k] as TopicAttributes).param === "sid",
);

/** The topic-name pattern, anchored: a plain name; a session-scoped kind, `:`
 * and 36 characters of `[0-9a-f-]`; or `kv:` and a namespace. */
export const TOPIC_PATTERN = `^(?:${PLAIN.join("|")}|(?:${SESSION_SCOPED.join("|")}):[0-9a-f-]{36}|kv:${NAMESPACE_PATTERN})$`;

/** How a topic name is described wherever one is refused. */
export const TOPIC_DESCRIPTION = `a topic is one of ${PLAIN.join(", ")}, ${SESSION_SCOPED.map((k) => `${k}:<sid>`).join(", ")} or kv:<namespace>`;

/** The pattern of one kind's names, for that kind's frame schema. */
export function topicNamePattern(kind: TopicKind): string {
  const a: TopicAttributes = TOPIC_ATTRIBUTES[kind];
  if (a.param === "sid") return `^${kind}${a.bare ? "(?::[0-9a-f-]{36})?" : ":[0-9a-f-]{36}"}$`;
  if (a.param === "ns") return `^${kind}:${NAMESPACE_PATTERN}$`;
  return `^${kind}$`;
}

// The longest defined name is `transcript_items:` + 36 or `kv:` + 64; anything
// longer is refused before a pattern runs over it.
const MAX_TOPIC_LENGTH = 80;
const topicRe = new RegExp(TOPIC_PATTERN);

/** A defined topic name, split into its kind and parameter. */
export interface ParsedTopic {
  name: string;
  kind: TopicKind;
  param?: string;
}

/** A subscribed name split into its kind and parameter, or `undefined` for a
 * name this generation does not define. The one parser of topic names. */
export function parseTopic(name: string): ParsedTopic | undefined {
  if (name.length > MAX_TOPIC_LENGTH || !topicRe.test(name)) return undefined;
  const colon = name.indexOf(":");
  if (colon < 0) return { name, kind: name as TopicKind };
  return { name, kind: name.slice(0, colon) as TopicKind, param: name.slice(colon + 1) };
}

/** The kind of a subscribed name (everything before the first `:`), or
 * `undefined` for a name this generation does not define. */
export function topicKind(name: string): TopicKind | undefined {
  return parseTopic(name)?.kind;
}

/** How the frames of a subscribed name fold — `session_status:<sid>` rather
 * than the kind behind it. `undefined` for an undefined name. */
export function topicGranularity(name: string): TopicGranularity | undefined {
  const kind = topicKind(name);
  return kind === undefined ? undefined : TOPIC_ATTRIBUTES[kind].granularity;
}

export function topicAttributes(kind: TopicKind): TopicAttributes {
  return TOPIC_ATTRIBUTES[kind];
}
