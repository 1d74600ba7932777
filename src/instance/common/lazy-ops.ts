import type { OpName } from "../../contract/attributes.js";
import type { AdminHandlers, Handler, Handlers } from "../dispatch.js";

/**
 * A capability's ops whose module loads at their first call, so an instance
 * that never uses them never loads them (issue 26): the first call pays the
 * load, later ones go straight to the loaded handler. `ops` is the list the
 * module's handlers must match (each register.ts's unit test says so).
 */
export function lazyHandlers(ops: readonly OpName[], load: () => Promise<Handlers>): Handlers {
  const loaded = once(load);
  const out: Record<string, Handler<OpName>> = {};
  for (const op of ops) {
    out[op] = (args, ctx) => {
      const h = loaded.value;
      if (h !== undefined) return (h[op] as unknown as Handler<OpName>)(args, ctx);
      return loaded.get().then((m) => (m[op] as unknown as Handler<OpName>)(args, ctx));
    };
  }
  return out as Handlers;
}

/** The administrative frames' counterpart of `lazyHandlers`. */
export function lazyAdmin(
  names: readonly string[],
  load: () => Promise<AdminHandlers>,
): AdminHandlers {
  const loaded = once(load);
  const out: AdminHandlers = {};
  for (const name of names) out[name] = async (frame) => (await loaded.get())[name]!(frame);
  return out;
}

/** One load, shared by every caller; its value once it settled. */
function once<T>(load: () => Promise<T>): { value: T | undefined; get(): Promise<T> } {
  let pending: Promise<T> | undefined;
  const self = {
    value: undefined as T | undefined,
    get: () => {
      pending ??= load().then((v) => {
        self.value = v;
        return v;
      });
      return pending;
    },
  };
  return self;
}
