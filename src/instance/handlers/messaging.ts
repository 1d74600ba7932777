import { contractError } from "../../contract/errors.js";
import type { MessageSendArgs, NotifySendArgs } from "../../contract/messaging.js";
import type { Handlers } from "../dispatch.js";
import type { Services } from "./services.js";

/** message_send, notify_send, say_post, say_mark_read. The sender always
 * comes from the connection's identity, never from arguments. */
export function messagingHandlers(s: Services): Handlers {
  return {
    message_send(frame, { identity }) {
      const from = identity!.role === "session" ? identity!.sid! : "user";
      return s.messaging.send(from, frame as MessageSendArgs);
    },

    notify_send(frame, { identity }) {
      const args = frame as NotifySendArgs;
      const about = args.sid ?? identity!.sid;
      if (about === undefined) {
        throw contractError("invalid_args", "/sid: required when a person sends a notification");
      }
      s.messaging.notify(about, args.text);
      return {};
    },

    say_post(frame, { identity }) {
      return { posted_at: s.messaging.say(identity!.sid!, frame.text as string) };
    },

    say_mark_read(frame) {
      s.messaging.clearUnread(frame.sid as string | undefined);
      return {};
    },
  };
}
