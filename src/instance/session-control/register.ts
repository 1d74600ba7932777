import { tmuxInstalled } from "../../harness/tmux.js";
import type { Contribution } from "../dispatch.js";
import { type SessionControlDeps, sessionControlHandlers } from "./handlers.js";

/** Session controls (contract §4.3.3): `terminal` where tmux is installed,
 * as session_rename types into tmux panes (DR-0031). */
export function registerSessionControl(deps: SessionControlDeps): Contribution {
  return {
    handlers: sessionControlHandlers(deps),
    capabilities: tmuxInstalled(deps.env) ? ["terminal"] : [],
  };
}
