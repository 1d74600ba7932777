import type { Handlers } from "../dispatch.js";
import type { Services } from "../handlers/services.js";

/** The control ops this build implements: the KV store and last_live removal. */
export function controlHandlers(s: Services): Handlers {
  return {
    kv_read({ ns, key }) {
      return s.kv.read(ns, key);
    },

    async kv_write({ ns, key, value, updated_at }) {
      return { updated_at: await s.kv.write(ns, key, value, updated_at) };
    },

    async kv_delete({ ns, key }) {
      await s.kv.delete(ns, key);
      return {};
    },

    session_last_live_remove({ sid }) {
      return { removed: s.sessions.removeLastLive(sid) };
    },
  };
}
