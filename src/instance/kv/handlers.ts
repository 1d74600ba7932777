import type { Handlers } from "../dispatch.js";
import type { Kv } from "./kv.js";

/** What the KV ops use. */
export interface KvHandlerDeps {
  kv: Kv;
}

/** kv_read, kv_write, kv_delete. */
export function kvHandlers(s: KvHandlerDeps): Handlers {
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
  };
}
