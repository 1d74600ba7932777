import type { Contribution } from "../dispatch.js";
import { type AuthHandlerDeps, adminHandlers, authHandlers } from "./handlers.js";

/** Person authentication's ops and its passkey frames (DR-0044); the HTTP
 * routes are the listener's (http/listener.ts). */
export function registerAuth(deps: AuthHandlerDeps): Contribution {
  return { handlers: authHandlers(deps), admin: adminHandlers(deps) };
}
