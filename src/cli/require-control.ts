import type { SessionControl } from "../contract/ecc/hud.js";
import { blockedReason, type ControlFacts } from "../hud/controls.js";
import { CliError } from "./common.js";

/** Refuse a control this machine cannot carry out, with the very reason the
 * HUD shows for it (one place decides: hud/controls.ts). */
export function requireControl(control: SessionControl, facts: ControlFacts): void {
  const reason = blockedReason(control, facts);
  if (reason !== undefined) throw new CliError("capability_unavailable", `${control}: ${reason}`);
}
