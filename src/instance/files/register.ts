import type { Contribution } from "../dispatch.js";
import { fileHandlers } from "./handlers.js";
import type { SurfaceDeps } from "./session-surfaces.js";

/** The file ops (contract §4.3.4, DR-0036) over a session's surfaces. */
export function registerFiles(deps: SurfaceDeps): Contribution {
  return { handlers: fileHandlers(deps) };
}
