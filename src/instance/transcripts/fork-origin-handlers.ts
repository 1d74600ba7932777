import { contractError } from "../../contract/errors.js";
import { findForkOrigin } from "../../harness/claude/fork-origin.js";
import type { Handlers } from "../dispatch.js";
import { type TranscriptHandlerDeps, transcriptFile } from "./handlers.js";

// `session_fork_origin` (contract §4.3.3, capability `fork`, offered by an
// instance of a Claude Code home): found from the transcripts themselves.

/** It uses what transcript_read does. */
export function forkOriginHandlers(s: TranscriptHandlerDeps): Handlers {
  return {
    async session_fork_origin({ sid }) {
      // No transcript of the session: `not_found`.
      const path = await transcriptFile(s, sid, {});
      try {
        const origin = await findForkOrigin(s.configHome, sid, path);
        return origin === undefined ? {} : { origin };
      } catch (error) {
        // Its own file vanished meanwhile.
        if (error instanceof Error && "code" in error && error.code === "ENOENT")
          throw contractError("not_found", `no transcript for session ${sid}`);
        throw error;
      }
    },
  };
}
