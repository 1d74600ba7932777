import { contractError } from "../../contract/errors.js";
import type { KvDeleteArgs, KvReadArgs, KvWriteArgs } from "../../contract/kv.js";
import type { Handlers } from "../dispatch.js";
import type { Services } from "./services.js";

/** The control ops this build implements: the KV store and last_live removal. */
export function controlHandlers(s: Services): Handlers {
  return {
    kv_read(frame) {
      const { ns, key } = frame as KvReadArgs;
      const entry = s.kv.read(ns, key);
      if (entry === undefined) throw contractError("not_found", `no key ${key} in ${ns}`);
      return entry;
    },

    kv_write(frame) {
      const { ns, key, value, updated_at } = frame as KvWriteArgs;
      const stamp = updated_at ?? s.clock.now();
      const result = s.kv.write(ns, key, value, stamp);
      if (result.won) s.hub.publish(`kv:${ns}`, { entries: [{ key, value, updated_at: stamp }] });
      return { updated_at: result.updated_at };
    },

    kv_delete(frame) {
      const { ns, key } = frame as KvDeleteArgs;
      const now = s.clock.now();
      if (s.kv.delete(ns, key, now)) {
        s.hub.publish(`kv:${ns}`, { entries: [{ key, updated_at: now, deleted: true }] });
      }
      return {};
    },

    session_last_live_remove(frame) {
      return { removed: s.sessions.removeLastLive(frame.sid as string) };
    },
  };
}
