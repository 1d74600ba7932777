import {
  type ObjectOptions,
  type Static,
  type TProperties,
  type TSchema,
  Type,
} from "@sinclair/typebox";
import { request, response, topicFrame } from "./envelope.js";
import {
  InstanceId,
  NonEmpty,
  Sid,
  Timestamp,
  TranscriptItemId,
  TranscriptItemSelector,
} from "./identifiers.js";
import { topicNamePattern } from "./topics.js";
import { upstream } from "./upstream.js";

// Transcript items and dumps (contract §4.3.3, §5.4, §10). The contract holds
// the vocabulary only — type names and the shape of each item. Reading the
// harness's JSONL and deciding which record becomes which item is the
// instance's job, so a harness that changes its file format moves the
// classifier and never the wire.

// --- type names (§10.2) ---

/** The type names spelled out in full. A name outside this list belongs to an
 * open family below — a newcomer there is normal, not an error. */
export const TRANSCRIPT_ITEM_TYPES = [
  "message:user:in",
  "message:user:out",
  "message:sub:in",
  "message:sub:out",
  "message:session:in",
  "message:session:out",
  "thinking",
  "notice:slash",
  "notice:interrupt",
  "system:compact",
  "system:api-error",
  "system:task",
  "system:caveat",
  "system:resume",
  "system:unknown",
] as const;
export type KnownTranscriptItemType = (typeof TRANSCRIPT_ITEM_TYPES)[number];

/** Families whose last segment the harness coins (`tool:Bash`,
 * `system:attachment:todo_reminder`, `hook:PreToolUse`). That segment keeps
 * the harness's spelling: rewriting it would stop a reader matching what it
 * sees against what actually ran. */
export const TRANSCRIPT_ITEM_FAMILIES = ["tool", "system:attachment", "hook"] as const;
export type TranscriptItemFamily = (typeof TRANSCRIPT_ITEM_FAMILIES)[number];

/** One coined segment, as the general type-name pattern allows it. */
const COINED = "[A-Za-z0-9_.-]+";

/** A type name in an open family: `<family>:` and one coined segment
 * (narrowed by `segment` where needed). Typed as the family prefix rather than
 * `string`, so TypeScript can still narrow an item union on `type`. */
function familyType<F extends TranscriptItemFamily>(family: F, segment = COINED) {
  return Type.Unsafe<`${F}:${string}`>(
    Type.String({
      pattern: `^${family}:${segment}$`,
      description: `a ${family} item type is ${family}:<name>`,
    }),
  );
}

// --- fields every item carries (§10.3) ---

/** Byte range of the record the item was read from. Items split out of one
 * record share it, so `transcript_read` with `before = offset + bytes` and
 * `max_bytes = bytes` returns that whole record — the way to show a person
 * the raw line behind an item the classifier may have misread. */
export const TranscriptItemSource = Type.Object({
  offset: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 1 }),
});
export type TranscriptItemSource = Static<typeof TranscriptItemSource>;

/** An item of the given `type` carrying `fields` besides the common ones. */
function item<T extends TSchema, F extends TProperties>(
  type: T,
  fields: F,
  options?: ObjectOptions,
) {
  return Type.Object(
    {
      /** `<uuid>:<index>`. Not `uuid` alone: one assistant record becomes its
       * thinking, its text and each call it made, and a link by `uuid` would
       * name all of them at once. Every link points with this. */
      id: TranscriptItemId,
      /** The record the item came from; several items may share it. */
      uuid: NonEmpty,
      source: TranscriptItemSource,
      type,
      /** The item's own instant: a call and its result each keep theirs. */
      at: Timestamp,
      /** Where the turn is known. Renumbered whenever the file is read again,
       * so it is for display and never a range bound. */
      turn: Type.Optional(Type.Integer({ minimum: 0 })),
      ...fields,
    },
    options,
  );
}

// --- call/result pairs (§10.4) ---

// A call and its result are two items, not one: a result can land many turns
// later with other items in between, and merging them would force a choice of
// which instant the pair sits at. Links are computed over the whole transcript,
// so one pointing outside the range that was asked for is normal, not broken.

/** The call side. `result_item` absent = nothing has come back yet. */
const UseFields = {
  role: Type.Literal("use"),
  result_item: Type.Optional(TranscriptItemId),
};

/** The result side. The parent is required: a result whose call the reader
 * has not seen (a partial read) is emitted as `system:unknown` instead. */
const ResultFields = {
  role: Type.Literal("result"),
  parent_item: TranscriptItemId,
  /** The call did not do its work: the person (or a rule) refused it, or it
   * ran and reported failure. Absent when it succeeded or the harness does
   * not say. An extension of this implementation (DR-0057). */
  failure: Type.Optional(Type.Union([Type.Literal("denied"), Type.Literal("failed")])),
};

/** A JSON object whose members belong to someone else: a raw tool input or
 * output, an attachment, an unplaceable record. Passed through, not shaped. */
const ForeignObject = Type.Record(Type.String(), Type.Unknown());

const OptString = Type.Optional(Type.String());
const OptId = Type.Optional(NonEmpty);
const OptCount = Type.Optional(Type.Integer({ minimum: 0 }));
const OptMs = Type.Optional(Type.Integer({ minimum: 0 }));
const OptFlag = Type.Optional(Type.Boolean());

// --- message: who said what to whom, from the subject's side ---

// `in` / `out` are read from the subject's position — the session, or the one
// agent `agent_id` names. For an agent, `message:user:in` is the brief its
// parent gave it, so one selection reads the same at every level.

export const MessageUserInItem = item(Type.Literal("message:user:in"), { text: Type.String() });
export const MessageUserOutItem = item(Type.Literal("message:user:out"), { text: Type.String() });

/** Handing a task to a sub-agent: the call of the pair `message:sub:in`
 * answers. */
export const MessageSubOutItem = item(Type.Literal("message:sub:out"), {
  ...UseFields,
  prompt: Type.String(),
  agent_id: OptId,
  /** The agent definition asked for, in the harness's spelling. */
  subagent_type: OptString,
  name: OptString,
  description: OptString,
});

/** What the sub-agent answered. */
export const MessageSubInItem = item(Type.Literal("message:sub:in"), {
  ...ResultFields,
  text: Type.String(),
  agent_id: OptId,
  /** The harness's word for how the agent ended. */
  status: OptString,
  duration_ms: OptMs,
});

/** A ccmsg message this subject sent to another session: only one that was
 * carried — its call came back done — never a call that was denied or failed
 * (DR-0057). It sits at the call's result. */
export const MessageSessionOutItem = item(Type.Literal("message:session:out"), {
  text: Type.String(),
  /** The addressee as written — a sid or a name — not resolved after the fact. */
  to: OptString,
  msg_id: OptId,
  reply_to: OptId,
  /** What the instance answered the send, where the call's output says:
   * handed over now, or held and why (`message_send`'s `delivered`,
   * `reason`). Extensions of this implementation (DR-0057). */
  delivered: OptFlag,
  reason: OptString,
});

/** A message another session sent this subject. From a direct-delivery
 * envelope only the body is kept: the wrapper and reply line are ours, and
 * what the harness wraps around it is the harness's, not the sender's words. */
export const MessageSessionInItem = item(Type.Literal("message:session:in"), {
  text: Type.String(),
  from: OptString,
  msg_id: OptId,
});

export const ThinkingItem = item(Type.Literal("thinking"), { text: Type.String() });

export const MessageItem = Type.Union([
  MessageUserInItem,
  MessageUserOutItem,
  MessageSubOutItem,
  MessageSubInItem,
  MessageSessionOutItem,
  MessageSessionInItem,
  ThinkingItem,
]);
export type MessageItem = Static<typeof MessageItem>;

// --- notice: a person operated the harness ---

// Apart from `system:*` because these explain a break in the conversation — a
// command was typed, a turn was stopped — which a reader skimming for why the
// thread jumps wants, unlike what the harness injects for its own reasons.

export const NoticeSlashItem = item(Type.Literal("notice:slash"), {
  command: NonEmpty,
  args: OptString,
  stdout: OptString,
});
export const NoticeInterruptItem = item(Type.Literal("notice:interrupt"), { text: OptString });

export const NoticeItem = Type.Union([NoticeSlashItem, NoticeInterruptItem]);
export type NoticeItem = Static<typeof NoticeItem>;

// --- system: the harness speaking for itself ---

export const SystemCompactItem = item(Type.Literal("system:compact"), { text: Type.String() });
export const SystemApiErrorItem = item(Type.Literal("system:api-error"), { text: Type.String() });
export const SystemTaskItem = item(Type.Literal("system:task"), {
  text: Type.String(),
  /** The background task or monitor the event is about. */
  task_id: OptId,
  /** The harness's word for what happened to it. */
  event: OptString,
});
export const SystemCaveatItem = item(Type.Literal("system:caveat"), { text: Type.String() });
export const SystemResumeItem = item(Type.Literal("system:resume"), { text: Type.String() });

/** `system:attachment:<kind>`: the kind passes through unchanged, so an
 * attachment nobody has seen before still arrives under its own name rather
 * than collapsing into `system:unknown`. */
export const SystemAttachmentItem = item(
  familyType("system:attachment"),
  { attachment: ForeignObject },
  upstream("claude", "an attachment the harness added to the conversation, under its own kind"),
);

/** A record the reader could not place, carried whole. Nothing in the file
 * vanishes silently: a dump with a hole no one can see is worse than one with
 * an unreadable item. */
export const SystemUnknownItem = item(
  Type.Literal("system:unknown"),
  { record: ForeignObject },
  upstream("claude", "a transcript record as the harness wrote it"),
);

export const SystemItem = Type.Union([
  SystemCompactItem,
  SystemApiErrorItem,
  SystemTaskItem,
  SystemCaveatItem,
  SystemResumeItem,
  SystemAttachmentItem,
  SystemUnknownItem,
]);
export type SystemItem = Static<typeof SystemItem>;

// --- hook: code the operator installed ---

export const HOOK_OUTCOMES = ["additionalContext", "output", "block"] as const;
export type HookOutcome = (typeof HOOK_OUTCOMES)[number];

/** `hook:<Event>` names the event only. The matcher goes in `hook_name`
 * (`PreToolUse:Bash`): as a type segment it would read as a level below the
 * event, and `hook:PreToolUse` would stop meaning every such hook. */
export const HookItem = item(
  familyType("hook"),
  {
    hook_name: NonEmpty,
    outcome: Type.Union(HOOK_OUTCOMES.map((o) => Type.Literal(o))),
    content: OptString,
    command: OptString,
    exit_code: Type.Optional(Type.Integer()),
    stderr: OptString,
    duration_ms: OptMs,
    /** The call the hook ran around, for events that have one. */
    tool_use_id: OptId,
  },
  upstream("claude", "a hook run, named by its event"),
);
export type HookItem = Static<typeof HookItem>;

// --- tool: `tool:<Name>`, one item for the call and one for its result ---

function toolUse<N extends string, F extends TProperties>(name: N, fields: F) {
  return item(
    Type.Literal(`tool:${name}` as const),
    { ...UseFields, tool_use_id: NonEmpty, ...fields },
    upstream("claude", `a ${name} call`),
  );
}

function toolResult<N extends string, F extends TProperties>(name: N, fields: F) {
  return item(
    Type.Literal(`tool:${name}` as const),
    { ...ResultFields, tool_use_id: NonEmpty, ...fields },
    upstream("claude", `what a ${name} call returned`),
  );
}

/** Tools whose items carry named fields, as `[use, result]`. A tool is added
 * here to sharpen how it reads, never to decide whether it is kept: any other
 * tool still arrives, with its raw input and result. */
const KNOWN_TOOL_ITEMS = {
  /** No exit code: the harness records a shell call's output and whether it
   * was interrupted, and that is all a reader can judge by. */
  Bash: [
    toolUse("Bash", { command: Type.String(), description: OptString }),
    toolResult("Bash", { stdout: OptString, stderr: OptString, interrupted: OptFlag }),
  ],
  /** `lines` / `bytes` count what came back; the content is the file's. */
  Read: [
    toolUse("Read", { file_path: NonEmpty, offset: OptCount, limit: OptCount }),
    toolResult("Read", { lines: OptCount, bytes: OptCount }),
  ],
  Write: [
    toolUse("Write", { file_path: NonEmpty, lines: OptCount }),
    toolResult("Write", { ok: Type.Boolean() }),
  ],
  /** Line counts, not bodies: both sides of an edit are file content, and a
   * dump that inlined them would be a copy of the file. */
  Edit: [
    toolUse("Edit", { file_path: NonEmpty, old_lines: OptCount, new_lines: OptCount }),
    toolResult("Edit", { ok: Type.Boolean() }),
  ],
  Grep: [
    toolUse("Grep", { pattern: Type.String(), path: OptString }),
    toolResult("Grep", { matches: OptCount }),
  ],
  Glob: [
    toolUse("Glob", { pattern: Type.String(), path: OptString }),
    toolResult("Glob", { matches: OptCount }),
  ],
  WebFetch: [
    toolUse("WebFetch", { url: NonEmpty, prompt: OptString }),
    toolResult("WebFetch", { text: OptString }),
  ],
  WebSearch: [
    toolUse("WebSearch", { query: Type.String() }),
    toolResult("WebSearch", { results: OptCount }),
  ],
  /** The calling side of what `message:sub:*` carries: that an agent was
   * started and how it ended. What it answered stays with the message. The
   * harness's older `Task` calls are classified here too. */
  Agent: [
    toolUse("Agent", {
      prompt: Type.String(),
      name: OptString,
      subagent_type: OptString,
      description: OptString,
    }),
    toolResult("Agent", { agent_id: OptId, status: OptString }),
  ],
  SendMessage: [
    toolUse("SendMessage", { to: NonEmpty, summary: OptString }),
    toolResult("SendMessage", { msg_id: OptId, routing: OptString }),
  ],
  Monitor: [
    toolUse("Monitor", {
      description: Type.String(),
      command: OptString,
      persistent: OptFlag,
      timeout_ms: OptMs,
    }),
    toolResult("Monitor", { task_id: OptId }),
  ],
  Skill: [
    toolUse("Skill", { skill: NonEmpty, args: OptString }),
    toolResult("Skill", { agent_id: OptId, background: OptFlag, status: OptString }),
  ],
  TodoWrite: [
    toolUse("TodoWrite", {
      todos: Type.Array(Type.Object({ content: Type.String(), status: Type.String() })),
    }),
    toolResult("TodoWrite", { ok: Type.Boolean() }),
  ],
  TaskStop: [
    toolUse("TaskStop", { task_id: NonEmpty }),
    toolResult("TaskStop", { ok: Type.Boolean() }),
  ],
  CronCreate: [
    toolUse("CronCreate", { cron: NonEmpty, prompt: OptString }),
    toolResult("CronCreate", { cron_id: OptId }),
  ],
} as const;

export type KnownTool = keyof typeof KNOWN_TOOL_ITEMS;
export const KNOWN_TOOLS = Object.keys(KNOWN_TOOL_ITEMS) as readonly KnownTool[];

type KnownToolItemSchema = (typeof KNOWN_TOOL_ITEMS)[KnownTool][number];
const knownToolItems: KnownToolItemSchema[] = Object.values(KNOWN_TOOL_ITEMS).flat();

/** Call and result items of the tools listed above. */
export const KnownToolItem = Type.Union(knownToolItems);
export type KnownToolItem = Static<typeof KnownToolItem>;

/** `tool:<Name>` for any tool not listed above. The known names are excluded
 * so that a `tool:Bash` item missing `command` fails rather than passing as a
 * raw one: each type name has exactly one shape to meet. */
const OtherToolType = familyType("tool", `(?!(?:${KNOWN_TOOLS.join("|")})$)${COINED}`);

export const OtherToolUseItem = item(
  OtherToolType,
  { ...UseFields, tool_use_id: NonEmpty, input: ForeignObject },
  upstream("claude", "a call of a tool the contract names no fields for"),
);
export const OtherToolResultItem = item(
  OtherToolType,
  { ...ResultFields, tool_use_id: NonEmpty, result: ForeignObject },
  upstream("claude", "what a tool the contract names no fields for returned"),
);

export const ToolItem = Type.Union([KnownToolItem, OtherToolUseItem, OtherToolResultItem]);
export type ToolItem = Static<typeof ToolItem>;

/** One typed item. Items are finer than lines — one record can yield several —
 * and a record the reader cannot recognise still yields one (a raw tool, an
 * attachment under its own kind, or `system:unknown`), so the list accounts
 * for the whole file. */
export const TranscriptItem = Type.Union(
  [MessageItem, NoticeItem, SystemItem, HookItem, ToolItem],
  { $id: "TranscriptItem" },
);
export type TranscriptItem = Static<typeof TranscriptItem>;

// --- id ledger, presets, dump file (§10.6, §10.7) ---

export const DUMP_ID_KINDS = ["agent", "task", "tool_use", "msg", "sid", "cron"] as const;
export type DumpIdKind = (typeof DUMP_ID_KINDS)[number];

/** One id the items mention, relative to the subject: an agent's ledger lists
 * the agents it started, not itself. Lets a client pick the next dump subject
 * without opening the file. */
export const DumpIdEntry = Type.Object({
  kind: Type.Union(DUMP_ID_KINDS.map((k) => Type.Literal(k))),
  id: NonEmpty,
  label: OptString,
  /** The harness's word for where it stands. */
  status: OptString,
  duration_ms: OptMs,
});
export type DumpIdEntry = Static<typeof DumpIdEntry>;
export const DumpIds = Type.Array(DumpIdEntry);
export type DumpIds = Static<typeof DumpIds>;

/** A named selection from the instance's configuration. It names an interest,
 * not a wire property. `types` is returned as written — `@other` references
 * included — because expansion and cycle refusal happen when the
 * configuration is loaded, not per read. */
export const DumpPreset = Type.Object({
  name: NonEmpty,
  description: OptString,
  opts: Type.Object({ types: Type.Array(TranscriptItemSelector) }),
});
export type DumpPreset = Static<typeof DumpPreset>;

/** The file `session_dump_write` leaves on the instance's host. Part of the
 * contract because the reply carries only its path. */
export const SessionDumpFile = Type.Object({
  sid: Sid,
  agent_id: OptId,
  written_at: Timestamp,
  /** The selection as applied: presets expanded, exclusions kept, so the file
   * says what it left out. */
  types: Type.Array(TranscriptItemSelector),
  /** Oldest first. */
  items: Type.Array(TranscriptItem),
  ids: DumpIds,
});
export type SessionDumpFile = Static<typeof SessionDumpFile>;

// --- range arguments shared by the typed reads ---

/** How much of a transcript a typed read covers. At most one lower and one
 * upper bound: two would mean a guess at which one wins, so
 * `transcriptArgViolations` refuses the pair instead. */
const RangeFields = {
  /** Read an agent below the session instead of the session itself. */
  agent_id: OptId,
  since_at: Type.Optional(Timestamp),
  since_uuid: OptId,
  until_at: Type.Optional(Timestamp),
  until_uuid: OptId,
  /** Applied left to right; absent = everything except
   * `system:attachment:*`, which is bulky and rarely wanted. */
  types: Type.Optional(Type.Array(TranscriptItemSelector)),
};

// --- session_dump_write ---

export const SessionDumpWriteArgs = Type.Object({
  sid: Sid,
  ...RangeFields,
  /** The base `types` is applied over. An unknown name is `not_found`, not
   * ignored: a dump silently taken with the wrong selection looks complete. */
  preset: Type.Optional(NonEmpty),
  /** Shorthand for the selector `-thinking`. */
  no_thinking: OptFlag,
  /** Shorthand for the selectors `-message:sub`, `-tool:Agent`. */
  no_agent: OptFlag,
});
export type SessionDumpWriteArgs = Static<typeof SessionDumpWriteArgs>;

/** The caller never names the path: the instance writes into its own dump
 * directory, so the op cannot be turned into a write anywhere. */
export const SessionDumpWriteResult = Type.Object({
  /** Absolute, on the writing host. */
  path: NonEmpty,
  instance: InstanceId,
  /** Items written per type name — per type, because one total cannot tell a
   * person whether the selection took what they meant. */
  entries: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  ids: DumpIds,
  bytes: Type.Integer({ minimum: 0 }),
});
export type SessionDumpWriteResult = Static<typeof SessionDumpWriteResult>;
export const SessionDumpWriteRequest = request("session_dump_write", SessionDumpWriteArgs);
export const SessionDumpWriteResponse = response("session_dump_write", SessionDumpWriteResult);

// --- dump_presets_read ---

export const DumpPresetsReadArgs = Type.Object({});
export type DumpPresetsReadArgs = Static<typeof DumpPresetsReadArgs>;
export const DumpPresetsReadResult = Type.Object({
  /** In configured order. */
  presets: Type.Array(DumpPreset),
});
export type DumpPresetsReadResult = Static<typeof DumpPresetsReadResult>;
export const DumpPresetsReadRequest = request("dump_presets_read", DumpPresetsReadArgs);
export const DumpPresetsReadResponse = response("dump_presets_read", DumpPresetsReadResult);

// --- transcript_read ---

/** Raw records, paged backwards by byte offset: read the tail, then pass
 * `start` as the next `before`. Offsets are those of `transcript:<sid>`, so
 * paged reads and live frames join without a gap. */
export const TranscriptReadArgs = Type.Object({
  sid: Sid,
  /** Lines ending at or before this offset; absent = from the end. */
  before: Type.Optional(Type.Integer({ minimum: 0 })),
  /** A wish: the instance narrows it to its own limit. */
  max_bytes: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Names a file, so the instance validates it strictly. Not with
   * `teammate`. */
  agent_id: OptId,
  /** The workflow run that owns `agent_id`. */
  run_id: OptId,
  /** A teammate by its addressed name, resolved by the instance rather than
   * pasted into a path. Not with `agent_id`. */
  teammate: OptId,
});
export type TranscriptReadArgs = Static<typeof TranscriptReadArgs>;

export const TranscriptReadResult = Type.Object({
  sid: Sid,
  /** Whole raw records, oldest first. */
  lines: Type.Array(Type.String()),
  /** Offset of the first line; `0` = the beginning is included. */
  start: Type.Integer({ minimum: 0 }),
  /** Offset just past the last line. */
  end: Type.Integer({ minimum: 0 }),
  /** The file size now — where a forward read or live frames continue. */
  size: Type.Integer({ minimum: 0 }),
});
export type TranscriptReadResult = Static<typeof TranscriptReadResult>;
export const TranscriptReadRequest = request("transcript_read", TranscriptReadArgs);
export const TranscriptReadResponse = response("transcript_read", TranscriptReadResult);

// --- transcript_items_read ---

/** A typed slice. Without bounds this generation reads from the beginning of
 * the transcript, not the tail. */
export const TranscriptItemsReadArgs = Type.Object({
  sid: Sid,
  ...RangeFields,
  /** Resume exactly at the item a previous reply returned as `next`. A lower
   * bound like `since_at` / `since_uuid`, so not combined with them. */
  since_id: Type.Optional(TranscriptItemId),
  /** A wish: the instance narrows it to its own limit. */
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type TranscriptItemsReadArgs = Static<typeof TranscriptItemsReadArgs>;

export const TranscriptItemsReadResult = Type.Object({
  /** Oldest first. */
  items: Type.Array(TranscriptItem),
  /** The first item `limit` cut off; absent = the range was answered whole. */
  next: Type.Optional(TranscriptItemId),
  ids: Type.Optional(DumpIds),
});
export type TranscriptItemsReadResult = Static<typeof TranscriptItemsReadResult>;
export const TranscriptItemsReadRequest = request("transcript_items_read", TranscriptItemsReadArgs);
export const TranscriptItemsReadResponse = response(
  "transcript_items_read",
  TranscriptItemsReadResult,
);

/** The exclusivity rules no single object schema states, as `path: message`
 * lines for `invalid_args`; empty when the arguments are consistent. The
 * schema has already passed. */
export function transcriptArgViolations(args: {
  since_at?: unknown;
  since_uuid?: unknown;
  since_id?: unknown;
  until_at?: unknown;
  until_uuid?: unknown;
  agent_id?: unknown;
  teammate?: unknown;
}): string[] {
  const out: string[] = [];
  const given = (keys: readonly (keyof typeof args)[]) => keys.filter((k) => args[k] !== undefined);
  const since = given(["since_at", "since_uuid", "since_id"]);
  if (since.length > 1) out.push(`/${since[1]}: only one lower bound (${since.join(", ")})`);
  const until = given(["until_at", "until_uuid"]);
  if (until.length > 1) out.push(`/${until[1]}: only one upper bound (${until.join(", ")})`);
  if (args.agent_id !== undefined && args.teammate !== undefined)
    out.push("/teammate: not allowed with agent_id");
  return out;
}

// --- topics (§5.4) ---

/** `transcript:<sid>` opens with where the file ends — no content — so a
 * subscriber can page backwards from there with `transcript_read`. It says
 * nothing about whether the session is alive: a finished file gets one too.
 * `lines` is ruled out so a delta that lost `start` or `end` is refused
 * rather than read as a snapshot. */
export const TranscriptSnapshotData = Type.Object({
  sid: Sid,
  size: Type.Integer({ minimum: 0 }),
  lines: Type.Optional(Type.Never()),
});
export type TranscriptSnapshotData = Static<typeof TranscriptSnapshotData>;

/** What was appended since the previous frame: complete lines only (a partial
 * line waits for its newline), each `start` equal to the previous `end`. */
export const TranscriptDeltaData = Type.Object({
  sid: Sid,
  lines: Type.Array(Type.String()),
  start: Type.Integer({ minimum: 0 }),
  end: Type.Integer({ minimum: 0 }),
  size: Type.Integer({ minimum: 0 }),
});
export type TranscriptDeltaData = Static<typeof TranscriptDeltaData>;

export const TranscriptData = Type.Union([TranscriptSnapshotData, TranscriptDeltaData]);
export type TranscriptData = Static<typeof TranscriptData>;
export const TranscriptFrame = topicFrame(topicNamePattern("transcript"), TranscriptData);
export type TranscriptFrame = Static<typeof TranscriptFrame>;

/** The snapshot is the tail of the item list (how long is the instance's
 * choice); later frames carry newly classified items. Older ones are read
 * with `transcript_items_read`. */
export const TranscriptItemsData = Type.Object({
  sid: Sid,
  items: Type.Array(TranscriptItem),
});
export type TranscriptItemsData = Static<typeof TranscriptItemsData>;
export const TranscriptItemsFrame = topicFrame(
  topicNamePattern("transcript_items"),
  TranscriptItemsData,
);
export type TranscriptItemsFrame = Static<typeof TranscriptItemsFrame>;
