import type { Contribution } from "../dispatch.js";
import { type CommonPlaneDeps, connectHandlers } from "./handlers.js";

/** The common plane (contract §4.2): greeting, ping, shutdown, a session's
 * stop, and topic subscriptions over every capability's topics. */
export function registerCommonPlane(deps: CommonPlaneDeps): Contribution {
  return { handlers: connectHandlers(deps) };
}
