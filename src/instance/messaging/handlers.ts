import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { contractError } from "../../contract/errors.js";
import type { NotificationsReadResult } from "../../contract/notifications.js";
import type { NotificationsStore } from "../../store/notifications.js";
import type { Clock } from "../../util/clock.js";
import type { Handlers } from "../dispatch.js";
import type { Messaging } from "./engine.js";

/** What the messaging ops use. */
export interface MessagingHandlerDeps {
  messaging: Messaging;
  notifications: NotificationsStore;
  clock: Clock;
}

/** A page of `notifications_read` when no limit is asked. */
const NOTIFICATIONS_PAGE_DEFAULT = 50;
/** What one reply's notifications may take: a frame, less room for the rest. */
const PAGE_BYTES = MAX_FRAME_BYTES - 64 * 1024;

/** The page cut where it would not fit one frame (one notification always
 * fits, as it fitted a `notify` event): the rest follow with `before`. */
function fitted(page: ReturnType<NotificationsStore["read"]>): NotificationsReadResult {
  let bytes = 0;
  let n = 0;
  for (const note of page.notifications) {
    bytes += Buffer.byteLength(JSON.stringify(note));
    if (n > 0 && bytes > PAGE_BYTES) break;
    n++;
  }
  const more = page.more || n < page.notifications.length;
  return {
    notifications: page.notifications.slice(0, n),
    unread: page.unread,
    ...(more ? { more: true as const } : {}),
  };
}

/** message_send, notify_send, say_post, say_mark_read, and the person's
 * inbox (notify_reply, notifications_read, notifications_mark_read). The sender always
 * comes from the connection's identity, never from arguments. Whether a
 * message is this instance's to carry was decided by dispatch's forward
 * stage, which also read who runs for an addressee without a connection
 * (DR-0025, DR-0048). */
export function messagingHandlers(s: MessagingHandlerDeps): Handlers {
  return {
    async message_send(args, { caller }) {
      return s.messaging.send(caller.role === "session" ? caller.sid : "user", args);
    },

    async notify_send(args, { caller }) {
      const about = args.sid ?? (caller.role === "session" ? caller.sid : undefined);
      if (about === undefined) {
        throw contractError("invalid_args", "/sid: required when a person sends a notification");
      }
      // Answered once kept (or once the push went, if it could not be kept).
      await s.messaging.notify(about, args.text);
      return {};
    },

    // Extension (DR-0056): the person's inbox.
    async notify_reply(args, { caller }) {
      const kept = await s.messaging.replyToPerson(caller.sid, args.reply_to, args.text);
      return { id: kept.id };
    },

    notifications_read(args) {
      const limit = args.limit ?? NOTIFICATIONS_PAGE_DEFAULT;
      const page = s.notifications.read({ ...args, limit }, s.clock.now());
      return fitted(page);
    },

    async notifications_mark_read(args) {
      const which =
        args.ids !== undefined ? { ids: args.ids } : { all: true as const, sid: args.sid };
      return s.notifications.markRead(which, s.clock.now());
    },

    say_post(args, { caller }) {
      return { posted_at: s.messaging.say(caller.sid, args.text) };
    },

    receipts_read({ mids }, { caller }) {
      const from = caller.role === "session" ? caller.sid : undefined;
      return { receipts: s.messaging.receipts.read(mids, from) };
    },

    say_mark_read(args) {
      s.messaging.clearUnread(args.sid);
      return {};
    },
  };
}
