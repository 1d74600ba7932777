import type { TranscriptHarness } from "../../harness/transcript-files.js";
import type { Logger } from "../../util/logger.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import { TranscriptFeeds } from "./feeds.js";
import { ItemIndex, serveItemsTopic } from "./items.js";
import { RawPublisher } from "./raw.js";
import type { SentRecords } from "./sent-join.js";
import { StatusFold } from "./status.js";
import { TranscriptTopics } from "./topics.js";

/** The consumers every transcript feed hands its lines to. */
export interface TranscriptParts {
  raw: RawPublisher;
  status: StatusFold;
  items: ItemIndex;
}

export interface Transcripts {
  feeds: TranscriptFeeds<TranscriptParts>;
  topics: TranscriptTopics<TranscriptParts>;
  /** The transcript path a session announced (live or lost), if any. */
  announced(sid: string): string | undefined;
  dispose(): void;
}

/** The transcripts engine: feeds per session, the topics they serve. */
export function serveTranscripts(input: {
  instanceId: string;
  harness: TranscriptHarness;
  home: string;
  sessions: Sessions;
  hub: TopicHub;
  log: Logger;
  /** What the instance carried: the mids of the sends a transcript shows. */
  sent?: SentRecords;
}): Transcripts {
  const { hub, sessions } = input;
  const announced = (sid: string) => {
    const found = sessions.lookup(sid);
    if (found === undefined) return undefined;
    return found.kind === "live" ? found.session.meta.transcript_path : found.row.transcript_path;
  };
  // `topics` is read lazily: parts are made when a feed starts, after both exist.
  let topics: TranscriptTopics<TranscriptParts> | undefined;
  const feeds = new TranscriptFeeds<TranscriptParts>({
    harness: input.harness,
    home: input.home,
    log: input.log,
    announced,
    parts: (info) => {
      const late = info.agentId === undefined && topics?.late.has(info.sid) === true;
      return {
        raw: new RawPublisher(info, hub, input.instanceId, late),
        items: new ItemIndex(info, hub, input.instanceId, late, input.sent),
        status: new StatusFold(
          info,
          (sid) => {
            hub.invalidate(`session_status:${sid}`);
            hub.invalidate("session_errors");
          },
          input.log,
        ),
      };
    },
  });
  topics = new TranscriptTopics(feeds, hub, input.log);
  hub.provideSnapshot("transcript", (_conn, sid) => ({
    sid,
    size: feeds.running(sid!)?.consumed() ?? 0,
  }));
  serveItemsTopic(hub, feeds);
  return {
    feeds,
    topics,
    announced,
    dispose() {
      topics?.dispose();
      feeds.dispose();
    },
  };
}
