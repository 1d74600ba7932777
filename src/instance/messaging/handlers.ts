import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { Forwarder } from "../mesh/forward.js";
import type { Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { Messaging } from "./engine.js";

/** What the messaging ops use. */
export interface MessagingHandlerDeps {
  sessions: Sessions;
  /** Which sessions run, from the harness's files; `fresh()` before acting. */
  presence: Pick<Presence, "fresh">;
  messaging: Messaging;
  /** Carries `message_send` to the instance owning its addressee (§7.7). */
  forwarder?: Pick<Forwarder, "liveElsewhere" | "messageSend">;
}

/** message_send, notify_send, say_post, say_mark_read. The sender always
 * comes from the connection's identity, never from arguments. */
export function messagingHandlers(s: MessagingHandlerDeps): Handlers {
  return {
    async message_send(args, { caller }) {
      // An addressee without a connection may still run (or have ended):
      // read who runs first. A connected one costs no read (DR-0025).
      // Connected to a peer: its owner answers, no read of the files here.
      if (!s.sessions.connected(args.to) && !s.forwarder?.liveElsewhere(args.to))
        await s.presence.fresh();
      // Not known here but owned elsewhere: the owner answers (§7.7 step 1).
      const elsewhere = await s.forwarder?.messageSend(args, caller);
      if (elsewhere !== undefined) return elsewhere;
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

    say_mark_read(args) {
      s.messaging.clearUnread(args.sid);
      return {};
    },
  };
}
