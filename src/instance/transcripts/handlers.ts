import { stat } from "node:fs/promises";
import { contractError } from "../../contract/errors.js";
import { transcriptArgViolations } from "../../contract/transcripts.js";
import {
  AGENT_ID_PATTERN,
  locateTranscript,
  teammateAgentId,
} from "../../harness/transcript-files.js";
import type { Handlers } from "../dispatch.js";
import type { HarnessKind } from "../sessions/presence.js";
import type { Transcripts } from "./engine.js";
import { readPage } from "./raw.js";

/** An agent id names a file, so it is checked strictly (`invalid_args`). */
export function checkAgentId(agentId: string | undefined): void {
  if (agentId !== undefined && !AGENT_ID_PATTERN.test(agentId))
    throw contractError("invalid_args", "/agent_id: letters, digits, _ and - only");
}

/** The refusal for a session (or agent) without a transcript. */
export function noTranscript(sid: string, agentId: string | undefined): Error {
  return contractError(
    "not_found",
    agentId === undefined
      ? `no transcript for session ${sid}`
      : `no transcript for agent ${agentId} of session ${sid}`,
  );
}

/** What the raw transcript op uses. */
export interface TranscriptHandlerDeps {
  /** The harness config home whose transcript tree transcripts must be in. */
  configHome: string;
  /** The harness whose config home it is. */
  harness: HarnessKind;
  transcripts: Transcripts;
}

/** The contained file behind (sid, agent_id | teammate), or `not_found`. */
export async function transcriptFile(
  s: TranscriptHandlerDeps,
  sid: string,
  pick: { agent_id?: string; teammate?: string },
): Promise<string> {
  const violations = transcriptArgViolations(pick);
  if (violations.length > 0) throw contractError("invalid_args", violations.join("; "));
  checkAgentId(pick.agent_id);
  const announced = s.transcripts.announced(sid);
  let agentId = pick.agent_id;
  if (pick.teammate !== undefined) {
    const main = await locateTranscript(s.harness, s.configHome, sid, { announced });
    agentId = main && (await teammateAgentId(main, sid, pick.teammate));
    if (agentId === undefined)
      throw contractError("not_found", `no teammate named ${pick.teammate} in session ${sid}`);
  }
  const path = await locateTranscript(s.harness, s.configHome, sid, { announced, agentId });
  if (path === undefined) throw noTranscript(sid, agentId);
  return path;
}

/** The raw transcript op (contract §4.3.3 `transcript_read`). A session
 * reads only its own: the op table's `own_sid`, refused by dispatch. */
export function transcriptHandlers(s: TranscriptHandlerDeps): Handlers {
  return {
    async transcript_read(args) {
      const path = await transcriptFile(s, args.sid, args);
      try {
        await stat(path);
      } catch {
        throw contractError("not_found", `no transcript for session ${args.sid}`);
      }
      const page = await readPage(path, args.before, args.max_bytes ?? Number.POSITIVE_INFINITY);
      return { sid: args.sid, ...page };
    },
  };
}
