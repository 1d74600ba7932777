import { type Static, Type } from "@sinclair/typebox";
import { MESSAGE_TEXT_MAX_CHARS } from "./constants.js";
import { request, response, topicFrame } from "./envelope.js";
import { Mid, Sender, Sid, Timestamp } from "./identifiers.js";
import { CandidateSession } from "./peers.js";
import { Text } from "./text.js";
import { topicNamePattern } from "./topics.js";

// Messaging (contract §4.3.2, §7): one recipient per message, no rooms; the
// sender comes from the connection, never from arguments.

/** Why a message was held instead of handed over. Not an error: the only
 * failure of `message_send` is `session_not_found`. */
export const UNDELIVERED_REASONS = [
  /** Alive but not listening yet; it gets the message when it starts. Wait. */
  "preparing",
  /** Stopped on purpose; `candidates` are offered. */
  "paused",
  /** Gone without saying so; `candidates` are offered. */
  "disappeared",
  /** Its instance cannot be reached over the mesh; nothing is held here. */
  "instance_unreachable",
  /** Declined for now (queue full, already being handed one). Held and offered
   * again: wait, do not resend. */
  "throttled",
  /** The inbox was full; its oldest message was dropped for this one. */
  "inbox_full",
] as const;
export type UndeliveredReason = (typeof UNDELIVERED_REASONS)[number];

/** What a session or a person says: bounded so that, with its labels, it
 * always fits one inbox or notify frame (constants.ts). */
const MessageText = Text({ minLength: 1, maxLength: MESSAGE_TEXT_MAX_CHARS });
export const UndeliveredReason = Type.Union(UNDELIVERED_REASONS.map((r) => Type.Literal(r)));

export const MessageSendArgs = Type.Object({
  /** Exactly one recipient session. */
  to: Sid,
  text: MessageText,
  /** The delivery frame this message answers. */
  reply_to: Type.Optional(Mid),
});
export type MessageSendArgs = Static<typeof MessageSendArgs>;
export const MessageSendResult = Type.Object({
  /** Handed to the recipient now (true), or kept in its inbox (false). */
  delivered: Type.Boolean(),
  /** Present exactly when `delivered` is false. */
  reason: Type.Optional(UndeliveredReason),
  /** Present when the addressee is paused or gone: sessions live now in the
   * same repository. */
  candidates: Type.Optional(Type.Array(CandidateSession)),
  /** Extension (DR-0055): a person's message typed into the session's
   * terminal as the person's own prompt (`delivered` is true): `confirmed`
   * once its transcript recorded the turn, `unconfirmed` when typed and not
   * seen there in time. Absent: it went as a message. */
  typed: Type.Optional(Type.Union([Type.Literal("confirmed"), Type.Literal("unconfirmed")])),
});
export type MessageSendResult = Static<typeof MessageSendResult>;
export const MessageSendRequest = request("message_send", MessageSendArgs);
export const MessageSendResponse = response("message_send", MessageSendResult);

/** A session tells watchers it spoke. No log is kept (the words are in its
 * transcript); only a volatile unread mark is raised. */
export const SayPostArgs = Type.Object({ text: MessageText });
export const SayPostResult = Type.Object({ posted_at: Timestamp });
export const SayPostRequest = request("say_post", SayPostArgs);
export const SayPostResponse = response("say_post", SayPostResult);

/** A person clears `say_post` marks: one session's, or all when `sid` is
 * omitted. */
export const SayMarkReadArgs = Type.Object({ sid: Type.Optional(Sid) });
export const SayMarkReadResult = Type.Object({});
export const SayMarkReadRequest = request("say_mark_read", SayMarkReadArgs);
export const SayMarkReadResponse = response("say_mark_read", SayMarkReadResult);

/** A short line for a person who is watching. Best effort: nothing is kept
 * for later, and a refused push still answers success. */
export const NotifySendArgs = Type.Object({
  /** The session the line is about; omitted = the caller. */
  sid: Type.Optional(Sid),
  text: MessageText,
});
export type NotifySendArgs = Static<typeof NotifySendArgs>;
export const NotifySendResult = Type.Object({});
export const NotifySendRequest = request("notify_send", NotifySendArgs);
export const NotifySendResponse = response("notify_send", NotifySendResult);

/** One delivery frame element of `inbox` (id = `mid`). */
export const InboxMessage = Type.Object({
  mid: Mid,
  /** A sid, or `"user"` for a person — who cannot be answered by message. */
  from: Sender,
  /** How to show the sender, resolved by the issuing instance: its title, else
   * `repo/ws`, else its sid; a person's messages carry `user`. */
  from_label: Type.String(),
  text: Type.String(),
  reply_to: Type.Optional(Mid),
  sent_at: Timestamp,
});
export type InboxMessage = Static<typeof InboxMessage>;

/** `inbox` (element): the snapshot is everything still undelivered for the
 * subscribing session; later frames are newly arrived messages. */
export const InboxFrame = topicFrame(topicNamePattern("inbox"), Type.Array(InboxMessage));
export type InboxFrame = Static<typeof InboxFrame>;

/** `notify` (event; no snapshot): one line about a session. */
export const Notification = Type.Object({
  /** The session the line is about. */
  sid: Sid,
  /** Its display name, resolved like `from_label`. */
  sid_label: Type.String(),
  text: Type.String(),
  sent_at: Timestamp,
});
export type Notification = Static<typeof Notification>;
export const NotifyFrame = topicFrame(topicNamePattern("notify"), Notification);
export type NotifyFrame = Static<typeof NotifyFrame>;
