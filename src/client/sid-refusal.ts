import { ContractError } from "../contract/errors.js";

// Kept apart from the resolver (sid-resolve.ts) so that every command's error
// path can recognise the refusal without loading the contract's schemas.

export interface KnownSession {
  sid: string;
  instance: string;
  title?: string;
  repo: string;
  ws: string;
  /** Connected now (in `peers`), else lately lost (in `last_live`). */
  live: boolean;
}

/** Refused: what was typed names no session, or several. `candidates` are
 * the sessions it could mean (empty when none). */
export class SidRefusal extends ContractError {
  constructor(
    code: "invalid_args" | "session_not_found",
    msg: string,
    readonly candidates: KnownSession[] = [],
  ) {
    super(code, msg);
  }
}
