import { type Static, Type } from "@sinclair/typebox";
import { request, response, topicFrame } from "./envelope.js";
import { InstanceId, Sid, Timestamp } from "./identifiers.js";
import { Text } from "./text.js";
import { topicNamePattern } from "./topics.js";

// The attention queue (this implementation's extension, DR-0062): what a
// session waits on a person for — a permission prompt, a question — kept as
// an item the person can answer from anywhere while the harness's own dialog
// stays up in the terminal. Generation-3 shapes are untouched; a
// generation-3 peer that does not know these ops answers `unknown_op`.

/** What the session waits on. */
export const ATTENTION_KINDS = [
  /** A tool call the harness asks permission for. */
  "permission",
  /** A question to the person (Claude Code's AskUserQuestion), answered with
   * one option label per question. */
  "question",
] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

/** How an item ended. */
export const ATTENTION_ENDS = [
  /** A person allowed it here or from another instance. */
  "allowed",
  /** A person denied it (the model receives the message). */
  "denied",
  /** The dialog was answered in the terminal before any decision came. */
  "answered_in_terminal",
  /** Nobody decided within the hold; the dialog stays in the terminal. */
  "timed_out",
  /** The session ended while the item waited. */
  "session_gone",
  /** The person was at the terminal (they typed into the session, or
   * answered its dialog there, within the window): the hook fell through at
   * once so their own dialog is not delayed. */
  "at_terminal",
  /** The hook went away unanswered (the instance restarted, the harness
   * cancelled it); the dialog, if any, is in the terminal. */
  "hook_gone",
  /** The harness offers no way to answer this one from elsewhere (Claude
   * Code's plan approval): kept as asked, answered in the terminal. */
  "terminal_only",
] as const;
export type AttentionEnd = (typeof ATTENTION_ENDS)[number];

/** How much of a tool's input an item keeps and shows (code points of its
 * JSON, secrets masked first). */
export const ATTENTION_INPUT_MAX_CHARS = 4000;
/** Items kept, all sessions together; the next one drops the oldest ended. */
export const ATTENTION_KEPT = 1000;
/** How long an ended item is kept (7 days, like a notification). */
export const ATTENTION_RETENTION_MS = 604_800_000;
/** The most `attention_read` answers at once. */
export const ATTENTION_PAGE_MAX = 200;
/** How long a hook is held for a decision by default (Claude Code's dialog is
 * up in the terminal all along, so holding costs the person there nothing). */
export const ATTENTION_HOLD_DEFAULT_MS = 600_000;
/** The same for Codex, which draws its dialog only once the hook has left it
 * (DR-0062): a person at its terminal waits out the hold. */
export const ATTENTION_CODEX_HOLD_DEFAULT_MS = 60_000;
/** A person at the terminal: their last input there is at most this old
 * (the hook then falls through at once). */
export const ATTENTION_AT_TERMINAL_DEFAULT_MS = 60_000;
/** The KV namespace that holds the person's grants (key: the granted sid),
 * replicated across the mesh with the rest of KV so every instance that
 * holds a hook can authorise a granted session's decision itself. */
export const ATTENTION_GRANTS_NS = "attention_grants";
/** A deny message, as a person types it. */
export const ATTENTION_MESSAGE_MAX_CHARS = 2000;

export const AttentionId = Type.Integer({ minimum: 1 });

/** One question of a `question` item, as the harness asked it. */
export const AttentionQuestion = Type.Object({
  question: Type.String(),
  header: Type.Optional(Type.String()),
  multi_select: Type.Optional(Type.Boolean()),
  options: Type.Array(
    Type.Object({ label: Type.String(), description: Type.Optional(Type.String()) }),
  ),
});
export type AttentionQuestion = Static<typeof AttentionQuestion>;

/** Who decided, and through what. */
export const AttentionDecider = Type.Object({
  role: Type.Union([Type.Literal("user"), Type.Literal("session")]),
  /** The deciding session, when a session decided (with the person's grant). */
  sid: Type.Optional(Sid),
  /** The instance the decision was made on (another one's, over the mesh). */
  instance: InstanceId,
  /** `console`, `cli`, `mcp`, … as the caller said. */
  via: Type.Optional(Type.String()),
});
export type AttentionDecider = Static<typeof AttentionDecider>;

/** A decision that came too late or second, kept beside the one that won. */
export const AttentionRefusal = Type.Object({
  at: Timestamp,
  by: AttentionDecider,
  behavior: Type.Union([Type.Literal("allow"), Type.Literal("deny")]),
  reason: Type.String(),
});

export const AttentionItem = Type.Object({
  id: AttentionId,
  /** The instance that holds the hook (decisions are forwarded to it). */
  instance: InstanceId,
  sid: Sid,
  sid_label: Type.Optional(Type.String()),
  harness: Type.Union([Type.Literal("claude"), Type.Literal("codex")]),
  kind: Type.Union(ATTENTION_KINDS.map((k) => Type.Literal(k))),
  tool: Type.String(),
  /** The tool's input as JSON, secret-looking values masked, bounded. */
  input: Type.String(),
  /** Cut at `ATTENTION_INPUT_MAX_CHARS`. */
  input_truncated: Type.Optional(Type.Literal(true)),
  cwd: Type.Optional(Type.String()),
  /** The harness's own "always allow" suggestions, as it gave them. */
  suggestions: Type.Optional(Type.Array(Type.Unknown())),
  questions: Type.Optional(Type.Array(AttentionQuestion)),
  asked_at: Timestamp,
  /** Absent while pending. */
  end: Type.Optional(Type.Union(ATTENTION_ENDS.map((e) => Type.Literal(e)))),
  ended_at: Type.Optional(Timestamp),
  decided_by: Type.Optional(AttentionDecider),
  /** The deny message the model received. */
  message: Type.Optional(Type.String()),
  /** Allowed with the harness's suggestions: it will not ask again. */
  always: Type.Optional(Type.Literal(true)),
  /** A question's answers: question text → chosen label(s). */
  answers: Type.Optional(Type.Record(Type.String(), Type.String())),
  refused: Type.Optional(Type.Array(AttentionRefusal)),
});
export type AttentionItem = Static<typeof AttentionItem>;

/** The queue, newest first: pending ones, or a session's, a page at a time.
 * `scope: "mesh"` adds every linked instance's page (each read there, as
 * the caller, and authorised there); `limit` and `before` then apply to
 * each instance's own ids. */
export const AttentionReadArgs = Type.Object({
  pending: Type.Optional(Type.Boolean()),
  sid: Type.Optional(Sid),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ATTENTION_PAGE_MAX })),
  before: Type.Optional(AttentionId),
  scope: Type.Optional(Type.Union([Type.Literal("local"), Type.Literal("mesh")])),
});
export type AttentionReadArgs = Static<typeof AttentionReadArgs>;
export const AttentionReadResult = Type.Object({
  items: Type.Array(AttentionItem),
  /** How many are pending (of `sid` when given). */
  pending: Type.Integer({ minimum: 0 }),
  more: Type.Optional(Type.Literal(true)),
  /** `scope: "mesh"`: the instances whose items could not be read (no
   * link, no answer, or they refused the caller), with why. */
  unread: Type.Optional(Type.Array(Type.Object({ instance: InstanceId, reason: Type.String() }))),
});
export type AttentionReadResult = Static<typeof AttentionReadResult>;
export const AttentionReadRequest = request("attention_read", AttentionReadArgs);
export const AttentionReadResponse = response("attention_read", AttentionReadResult);

/** A person decides an item of session `sid` (the subject: forwarded to the
 * instance that holds the session). `always` allows with the harness's own
 * suggestions; `answers` answers a question. */
export const AttentionDecideArgs = Type.Object({
  sid: Sid,
  id: AttentionId,
  behavior: Type.Union([Type.Literal("allow"), Type.Literal("deny")]),
  message: Type.Optional(Text({ minLength: 1, maxLength: ATTENTION_MESSAGE_MAX_CHARS })),
  always: Type.Optional(Type.Literal(true)),
  answers: Type.Optional(Type.Record(Type.String(), Type.String())),
  via: Type.Optional(Type.String({ maxLength: 40 })),
});
export type AttentionDecideArgs = Static<typeof AttentionDecideArgs>;
/** `decided`: this decision is the item's end. `refused`: the item had ended
 * (or was decided first by someone else); `reason` says how, the item shows
 * what won and keeps this decision in `refused`. */
export const AttentionDecideResult = Type.Object({
  outcome: Type.Union([Type.Literal("decided"), Type.Literal("refused")]),
  reason: Type.Optional(Type.String()),
  item: AttentionItem,
});
export type AttentionDecideResult = Static<typeof AttentionDecideResult>;
export const AttentionDecideRequest = request("attention_decide", AttentionDecideArgs);
export const AttentionDecideResponse = response("attention_decide", AttentionDecideResult);

/** The rules no schema states: a deny takes no `always` or `answers`; a
 * question is answered by allowing it. */
export function decideViolations(args: AttentionDecideArgs): string[] {
  if (args.behavior === "deny" && args.always === true) return ["/always: only with allow"];
  if (args.behavior === "deny" && args.answers !== undefined) return ["/answers: only with allow"];
  return [];
}

/** The person's grant: session `sid` may read and decide other sessions'
 * items (never its own). Off until the person grants it. */
export const AttentionGrant = Type.Object({
  sid: Sid,
  sid_label: Type.Optional(Type.String()),
  granted_at: Timestamp,
  /** The instance the person granted it on. */
  instance: InstanceId,
});
export type AttentionGrant = Static<typeof AttentionGrant>;

/** The person grants session `grantee` the right (kept, mesh-wide, until
 * revoked). Named `grantee`, not `sid`: the op is no session's to forward. */
export const AttentionGrantArgs = Type.Object({ grantee: Sid });
export const AttentionGrantResult = Type.Object({ grant: AttentionGrant });
export const AttentionGrantRequest = request("attention_grant", AttentionGrantArgs);
export const AttentionGrantResponse = response("attention_grant", AttentionGrantResult);

/** The person takes it back; `revoked` false when there was none. */
export const AttentionRevokeArgs = Type.Object({ grantee: Sid });
export const AttentionRevokeResult = Type.Object({ revoked: Type.Boolean() });
export const AttentionRevokeRequest = request("attention_revoke", AttentionRevokeArgs);
export const AttentionRevokeResponse = response("attention_revoke", AttentionRevokeResult);

/** Every grant in force. */
export const AttentionGrantsArgs = Type.Object({});
export const AttentionGrantsResult = Type.Object({ grants: Type.Array(AttentionGrant) });
export const AttentionGrantsRequest = request("attention_grants", AttentionGrantsArgs);
export const AttentionGrantsResponse = response("attention_grants", AttentionGrantsResult);

/** A grant as kept in KV, or undefined for anything else written there. */
export function parseGrant(value: unknown): AttentionGrant | undefined {
  const v = value as Partial<AttentionGrant> | null;
  if (typeof v !== "object" || v === null) return undefined;
  if (typeof v.sid !== "string" || typeof v.granted_at !== "number") return undefined;
  if (typeof v.instance !== "string") return undefined;
  return v as AttentionGrant;
}

/** `attention` (extension topic): the queue live, every item that changed. */
export const AttentionTopicData = Type.Object({ items: Type.Array(AttentionItem) });
export const AttentionFrame = topicFrame(topicNamePattern("attention"), AttentionTopicData);
