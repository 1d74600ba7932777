import type { Handlers } from "../dispatch.js";
import type { Sessions } from "./sessions.js";

/** session_last_live_remove: a person forgets a session that ended. */
export function sessionHandlers(s: { sessions: Sessions }): Handlers {
  return {
    session_last_live_remove({ sid }) {
      return { removed: s.sessions.removeLastLive(sid) };
    },
  };
}
