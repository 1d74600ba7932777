import { type Static, Type } from "@sinclair/typebox";
import { TITLE_MAX_CHARS } from "./constants.js";
import { request, response } from "./envelope.js";
import { InstanceId, NonEmpty, Sid, Timestamp } from "./identifiers.js";
import { Text } from "./text.js";
import { upstream } from "./upstream.js";

// Control ops on whole sessions (contract §4.3.3): signal, rename, read the
// environment, search transcripts, find a fork's seam, forget a lost row.
// Every one is user-only and instance-local: it concerns one host's processes
// or files, so the op is forwarded to the instance holding the session.

// --- session_kill ---

/** The caller names a sid, never a pid: the instance maps one to the other at
 * signal time, so a pid that was reused meanwhile cannot be hit by mistake. */
export const SessionKillArgs = Type.Object({
  sid: Sid,
  /** Escalate to an unconditional kill. The instance never escalates on its
   * own: a session given a chance to stop cleanly keeps its transcript whole. */
  force: Type.Optional(Type.Boolean()),
});
export type SessionKillArgs = Static<typeof SessionKillArgs>;
export const SessionKillResult = Type.Object({
  /** Whether the process was seen gone within the grace period. `false` is not
   * a failure: the signal went out and the process is still there. */
  terminated: Type.Boolean(),
});
export type SessionKillResult = Static<typeof SessionKillResult>;
export const SessionKillRequest = request("session_kill", SessionKillArgs);
export const SessionKillResponse = response("session_kill", SessionKillResult);

// --- session_rename (capability `terminal`) ---

/** C0 controls, DEL and C1 controls. The title is typed into a terminal as
 * keystrokes: a newline would submit the rename early and type the rest as a
 * new prompt, and an escape byte would reach the terminal as a sequence. */
export const TITLE_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/** Types the session's own rename command into its terminal. */
export const SessionRenameArgs = Type.Object({
  sid: Sid,
  /** Limited over the value as sent; the instance trims surrounding whitespace
   * afterwards. Control characters are refused, never stripped. */
  title: Text({
    minLength: 1,
    maxLength: TITLE_MAX_CHARS,
    pattern: TITLE_PATTERN,
    description: `a title is 1 to ${TITLE_MAX_CHARS} characters without control characters`,
  }),
});
export type SessionRenameArgs = Static<typeof SessionRenameArgs>;
/** Success means the keystrokes reached the terminal. The new title shows up
 * later on the `agents` topic, once the harness itself has taken it. */
export const SessionRenameResult = Type.Object({
  /** Host-local handle of the terminal typed into. */
  terminal_id: Type.String(),
  instance: InstanceId,
  /** The trimmed title actually typed. */
  title: Type.String(),
});
export type SessionRenameResult = Static<typeof SessionRenameResult>;
export const SessionRenameRequest = request("session_rename", SessionRenameArgs);
export const SessionRenameResponse = response("session_rename", SessionRenameResult);

// --- session_env_read ---

export const SessionEnvReadArgs = Type.Object({ sid: Sid });
export type SessionEnvReadArgs = Static<typeof SessionEnvReadArgs>;
export const SessionEnvReadResult = Type.Object({
  /** The process read, after checking the pid still belongs to the session. */
  pid: Type.Integer({ minimum: 1 }),
  instance: InstanceId,
  /** Verbatim, secrets included: what to hide is the caller's decision, since
   * only the caller knows who will see it. */
  env: Type.Record(Type.String(), Type.String()),
});
export type SessionEnvReadResult = Static<typeof SessionEnvReadResult>;
export const SessionEnvReadRequest = request("session_env_read", SessionEnvReadArgs);
export const SessionEnvReadResponse = response("session_env_read", SessionEnvReadResult);

// --- session_search ---

/** Searches the transcripts of sessions that ran on this instance, finished
 * ones included. Every argument is optional: no arguments lists everything the
 * walk reaches. */
export const SessionSearchArgs = Type.Object({
  /** Newline-separated clauses are ORed; whitespace-separated terms within a
   * clause are ANDed across the session's messages, not within one message. */
  query: Type.Optional(Type.String()),
  case_sensitive: Type.Optional(Type.Boolean()),
  /** Clauses are regular expressions. */
  regex: Type.Optional(Type.Boolean()),
  /** Search the person's messages. */
  target_user: Type.Optional(Type.Boolean({ default: true })),
  /** Search the agent's messages. */
  target_agent: Type.Optional(Type.Boolean({ default: true })),
  /** Space-separated words matched against the session's cwd. */
  cwd: Type.Optional(Type.String()),
  /** A substring of the sid, not a whole one — hence a plain string. */
  sid: Type.Optional(Type.String()),
  config_dirs: Type.Optional(Type.Array(Type.String())),
  modified_within_ms: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type SessionSearchArgs = Static<typeof SessionSearchArgs>;

/** One message that matched. */
export const SessionSearchMatch = Type.Object({
  role: Type.Union([Type.Literal("user"), Type.Literal("agent")]),
  text: Type.String(),
  /** Absent when the record carries no time. */
  said_at: Type.Optional(Timestamp),
});
export type SessionSearchMatch = Static<typeof SessionSearchMatch>;

/** One transcript that matched. */
export const SessionSearchHit = Type.Object({
  sid: Sid,
  /** The host the transcript lives on; `file` is a path there. */
  instance: InstanceId,
  config_dir: Type.String(),
  /** Absolute transcript path on that host. */
  file: Type.String(),
  cwd: Type.Optional(Type.String()),
  /** `owner/repo`. */
  repo: Type.Optional(Type.String()),
  ws: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  size: Type.Integer({ minimum: 0 }),
  matches: Type.Array(SessionSearchMatch),
  /** Read from the last turn and left unmapped, so a resume can pass it back
   * to the harness as is. */
  model: Type.Optional(Type.String(upstream("claude", "model name as the last turn spells it"))),
  effort: Type.Optional(
    Type.String(upstream("claude", "reasoning effort as the last turn spells it")),
  ),
});
export type SessionSearchHit = Static<typeof SessionSearchHit>;

export const SessionSearchResult = Type.Object({
  hits: Type.Array(SessionSearchHit),
  /** The walk ran out of budget; the hits are real but not all of them. */
  truncated: Type.Boolean(),
});
export type SessionSearchResult = Static<typeof SessionSearchResult>;
export const SessionSearchRequest = request("session_search", SessionSearchArgs);
export const SessionSearchResponse = response("session_search", SessionSearchResult);

// --- session_fork_origin (capability `fork`) ---

/** Where a forked session stops being a copy of its ancestor. */
export const ForkOrigin = Type.Object({
  /** The ancestor. */
  sid: Sid,
  /** Id of the last copied record; the seam is right after it. */
  boundary_uuid: NonEmpty,
  /** How many records were copied. */
  copied: Type.Integer({ minimum: 0 }),
});
export type ForkOrigin = Static<typeof ForkOrigin>;

export const SessionForkOriginArgs = Type.Object({ sid: Sid });
export type SessionForkOriginArgs = Static<typeof SessionForkOriginArgs>;
export const SessionForkOriginResult = Type.Object({
  /** Absent both when the session is no fork and when the ancestor's file is
   * gone: either way there is no seam to show. */
  origin: Type.Optional(ForkOrigin),
});
export type SessionForkOriginResult = Static<typeof SessionForkOriginResult>;
export const SessionForkOriginRequest = request("session_fork_origin", SessionForkOriginArgs);
export const SessionForkOriginResponse = response("session_fork_origin", SessionForkOriginResult);

// --- session_last_live_remove ---

/** Removes one row from `last_live`. Only the row goes: the session stays
 * resumable elsewhere, and seeing it connect again records it again. */
export const SessionLastLiveRemoveArgs = Type.Object({ sid: Sid });
export type SessionLastLiveRemoveArgs = Static<typeof SessionLastLiveRemoveArgs>;
export const SessionLastLiveRemoveResult = Type.Object({
  /** Whether the row existed. An unknown sid is not an error: the caller wants
   * the row gone, and it is. */
  removed: Type.Boolean(),
});
export type SessionLastLiveRemoveResult = Static<typeof SessionLastLiveRemoveResult>;
export const SessionLastLiveRemoveRequest = request(
  "session_last_live_remove",
  SessionLastLiveRemoveArgs,
);
export const SessionLastLiveRemoveResponse = response(
  "session_last_live_remove",
  SessionLastLiveRemoveResult,
);
