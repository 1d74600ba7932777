import type { LauncherConfig } from "../../config/launcher.js";
import type { Contribution } from "../dispatch.js";
import { type LauncherHandlerDeps, launcherHandlers } from "./handlers.js";

/** The launcher (capability `launcher`), offered when ccmsg's config has
 * the section at start; its templates are read per request. */
export function registerLauncher(
  deps: LauncherHandlerDeps & { config: LauncherConfig | undefined },
): Contribution {
  return {
    handlers: launcherHandlers(deps),
    capabilities: deps.config === undefined ? [] : ["launcher"],
  };
}
