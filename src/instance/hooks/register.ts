import type { Contribution } from "../dispatch.js";
import { HookAnswers, type HookAnswersDeps } from "./answers.js";

/** The http hooks' answers (DR-0058): no ops of their own; the HTTP
 * listener's hook route asks them. */
export function registerHooks(deps: HookAnswersDeps): Contribution & { hooks: HookAnswers } {
  return { hooks: new HookAnswers(deps), handlers: {} };
}
