import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { Messaging } from "./engine.js";

/** What the messaging ops use. */
export interface MessagingHandlerDeps {
  messaging: Messaging;
}

/** message_send, notify_send, say_post, say_mark_read. The sender always
 * comes from the connection's identity, never from arguments. Whether a
 * message is this instance's to carry was decided by dispatch's forward
 * stage, which also read who runs for an addressee without a connection
 * (DR-0025, DR-0048). */
export function messagingHandlers(s: MessagingHandlerDeps): Handlers {
  return {
    async message_send(args, { caller }) {
      return s.messaging.send(caller.role === "session" ? caller.sid : "user", args);
    },

    notify_send(args, { caller }) {
      const about = args.sid ?? (caller.role === "session" ? caller.sid : undefined);
      if (about === undefined) {
        throw contractError("invalid_args", "/sid: required when a person sends a notification");
      }
      s.messaging.notify(about, args.text);
      return {};
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
