import { lazyAdmin, lazyHandlers } from "../common/lazy-ops.js";
import type { Contribution } from "../dispatch.js";
import type { AuthHandlerDeps } from "./handlers.js";

/** Person authentication's ops and passkey frames, so they answer before
 * their module is loaded. */
export const AUTH_OPS = ["auth_refresh", "auth_resolve", "auth_rotate"] as const;
export const AUTH_ADMIN = ["admin_passkey_add", "admin_passkey_list", "admin_passkey_remove"];

/** Person authentication's ops and its passkey frames (DR-0044), loaded at
 * the first; the HTTP routes are the listener's (http/listener.ts). */
export function registerAuth(deps: AuthHandlerDeps): Contribution {
  const load = () => import("./handlers.js");
  return {
    handlers: lazyHandlers(AUTH_OPS, () => load().then((m) => m.authHandlers(deps))),
    admin: lazyAdmin(AUTH_ADMIN, () => load().then((m) => m.adminHandlers(deps))),
  };
}
