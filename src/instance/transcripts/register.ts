import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { HarnessKind } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import { serveTranscripts, type Transcripts } from "./engine.js";
import { forkOriginHandlers } from "./fork-origin-handlers.js";
import { transcriptHandlers } from "./handlers.js";
import { transcriptItemsHandlers } from "./item-handlers.js";
import type { SentRecords } from "./sent-join.js";
import { serveSessionStatus } from "./status.js";

/** What the transcript feeds are built on. */
export interface TranscriptsDeps {
  instanceId: string;
  harness: HarnessKind;
  /** The harness config home whose transcript tree transcripts must be in. */
  configHome: string;
  sessions: Sessions;
  hub: TopicHub;
  /** ccmsg's config file (dump presets) is read from the environment. */
  env: NodeJS.ProcessEnv;
  /** Where `session_dump_write` writes (`<state dir>/dumps`). */
  dumpDir: string;
  log: Logger;
  /** The inbox store: the mids of the sends transcripts show (DR-0057). */
  sent?: SentRecords;
}

/** Transcript feeds and their topics, `session_status`, and the transcript
 * ops; `fork` for a Claude Code home, whose transcripts say where a fork
 * came from (DR-0039). */
export function registerTranscripts(
  deps: TranscriptsDeps,
): Contribution & { transcripts: Transcripts } {
  const { instanceId, harness, configHome, sessions, hub, log } = deps;
  const transcripts = serveTranscripts({
    instanceId,
    harness,
    home: configHome,
    sessions,
    hub,
    log,
    sent: deps.sent,
  });
  serveSessionStatus({ instanceId, hub, sessions, feeds: transcripts.feeds, log });
  const reads = { configHome, harness, transcripts };
  return {
    transcripts,
    handlers: {
      ...transcriptHandlers(reads),
      ...transcriptItemsHandlers({ instanceId, env: deps.env, transcripts, dumpDir: deps.dumpDir }),
      ...forkOriginHandlers(reads),
    },
    capabilities: harness === "claude" ? ["fork"] : [],
  };
}
