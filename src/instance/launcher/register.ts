import type { LauncherConfig } from "../../config/launcher.js";
import { lazyHandlers } from "../common/lazy-ops.js";
import type { Contribution } from "../dispatch.js";
import type { LauncherHandlerDeps } from "./handlers.js";

/** The launcher's ops, so they answer before their module is loaded. */
export const LAUNCHER_OPS = ["launcher_config_read", "dir_tree", "launcher_run"] as const;

/** The launcher (capability `launcher`), offered when ccmsg's config has
 * the section at start; its templates are read per request, its module
 * loaded at the first of its ops. */
export function registerLauncher(
  deps: LauncherHandlerDeps & { config: LauncherConfig | undefined },
): Contribution {
  return {
    handlers: lazyHandlers(LAUNCHER_OPS, () =>
      import("./handlers.js").then((m) => m.launcherHandlers(deps)),
    ),
    capabilities: deps.config === undefined ? [] : ["launcher"],
  };
}
