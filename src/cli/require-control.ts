import type { SessionControl } from "../contract/ecc/hud.js";
import { ContractError } from "../contract/errors.js";
import { blockedReason, type ControlFacts } from "../hud/controls.js";

/** Refuse a control this machine cannot carry out, with the very reason the
 * HUD shows for it (one place decides: hud/controls.ts). */
export function requireControl(control: SessionControl, facts: ControlFacts): void {
  const reason = blockedReason(control, facts);
  if (reason !== undefined)
    throw new ContractError("capability_unavailable", `${control}: ${reason}`);
}
