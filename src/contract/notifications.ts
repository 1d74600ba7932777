import { type Static, Type } from "@sinclair/typebox";
import { MESSAGE_TEXT_MAX_CHARS } from "./constants.js";
import { request, response } from "./envelope.js";
import { Mid, Sid, Timestamp } from "./identifiers.js";
import { Text } from "./text.js";

// The person's inbox (this implementation's extension, DR-0056): every
// notification the instance raised, kept for a while with a read mark, and a
// session's answer to a person's message linked to the mid it answers. The
// generation-3 `notify_send` and `notify` shapes are untouched; a
// generation-3 peer that does not know these ops answers `unknown_op`.

/** Notifications kept, all sessions together; the next one drops the oldest. */
export const NOTIFICATIONS_KEPT = 1000;
/** How long a notification is kept (7 days, like a held message). */
export const NOTIFICATIONS_RETENTION_MS = 604_800_000;
/** The most `notifications_read` answers at once. */
export const NOTIFICATIONS_PAGE_MAX = 200;
/** How much of the answered message a reply keeps, to show what it answers
 * once that message has left the inbox (code points). */
export const NOTIFICATION_QUOTE_MAX_CHARS = 500;

/** Its place in the person's inbox: increasing, never reused. */
export const NotificationId = Type.Integer({ minimum: 1 });

/** A kept notification: the generation-3 `Notification` plus its id, its read
 * mark, and what it answers when it is a reply to a person's message. */
export const StoredNotification = Type.Object({
  id: NotificationId,
  sid: Sid,
  sid_label: Type.String(),
  text: Type.String(),
  sent_at: Timestamp,
  /** The message it answers (a reply to a person). */
  reply_to: Type.Optional(Mid),
  /** The start of that message's text, when this instance carried it. */
  quote: Type.Optional(Type.String()),
  /** When the person read it; absent while unread. */
  read_at: Type.Optional(Timestamp),
});
export type StoredNotification = Static<typeof StoredNotification>;

/** A session answers a person's message: kept in the person's inbox, linked to
 * `reply_to`, and pushed as a `notify` event like `notify_send`. Answered only
 * once it is on disk. */
export const NotifyReplyArgs = Type.Object({
  reply_to: Mid,
  text: Text({ minLength: 1, maxLength: MESSAGE_TEXT_MAX_CHARS }),
});
export type NotifyReplyArgs = Static<typeof NotifyReplyArgs>;
export const NotifyReplyResult = Type.Object({ id: NotificationId });
export const NotifyReplyRequest = request("notify_reply", NotifyReplyArgs);
export const NotifyReplyResponse = response("notify_reply", NotifyReplyResult);

/** A person reads their inbox, newest first. */
export const NotificationsReadArgs = Type.Object({
  /** Only the unread ones. */
  unread: Type.Optional(Type.Boolean()),
  /** Only those about this session. */
  sid: Type.Optional(Sid),
  /** At most this many (default 50). */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: NOTIFICATIONS_PAGE_MAX })),
  /** Only those older than this id: the next page. */
  before: Type.Optional(NotificationId),
});
export type NotificationsReadArgs = Static<typeof NotificationsReadArgs>;
export const NotificationsReadResult = Type.Object({
  notifications: Type.Array(StoredNotification),
  /** How many are unread (about `sid` when it is given). */
  unread: Type.Integer({ minimum: 0 }),
  /** Older ones follow: ask again with `before` the last id. */
  more: Type.Optional(Type.Literal(true)),
});
export type NotificationsReadResult = Static<typeof NotificationsReadResult>;
export const NotificationsReadRequest = request("notifications_read", NotificationsReadArgs);
export const NotificationsReadResponse = response("notifications_read", NotificationsReadResult);

/** A person marks notifications read: the `ids`, or `all` (about `sid` when
 * it is given). Exactly one of `ids` and `all`. */
export const NotificationsMarkReadArgs = Type.Object({
  ids: Type.Optional(Type.Array(NotificationId, { minItems: 1, maxItems: NOTIFICATIONS_PAGE_MAX })),
  all: Type.Optional(Type.Literal(true)),
  sid: Type.Optional(Sid),
});
export type NotificationsMarkReadArgs = Static<typeof NotificationsMarkReadArgs>;
export const NotificationsMarkReadResult = Type.Object({
  /** How many were unread and are read now. */
  marked: Type.Integer({ minimum: 0 }),
  /** How many are still unread. */
  unread: Type.Integer({ minimum: 0 }),
});
export const NotificationsMarkReadRequest = request(
  "notifications_mark_read",
  NotificationsMarkReadArgs,
);
export const NotificationsMarkReadResponse = response(
  "notifications_mark_read",
  NotificationsMarkReadResult,
);

/** The rule no schema states: exactly one of `ids` and `all`; `sid` only
 * with `all`. */
export function markReadViolations(args: NotificationsMarkReadArgs): string[] {
  if ((args.ids === undefined) === (args.all === undefined))
    return ["/ids: give either ids or all, not both or neither"];
  if (args.sid !== undefined && args.all === undefined) return ["/sid: narrows only all"];
  return [];
}
