import { parseTopic } from "../../contract/topics.js";
import type { Logger } from "../../util/logger.js";
import type { TopicHub } from "../topic-hub.js";
import type { Feed, FeedConsumer, TranscriptFeeds } from "./feeds.js";

/** The topic kinds one transcript feed serves. */
const FEED_KINDS = new Set(["transcript", "transcript_items", "session_status"]);

/** Whether a topic kind is served from a session's transcript feed. */
export function isFeedKind(kind: string): boolean {
  return FEED_KINDS.has(kind);
}

/** How often a held sid without a transcript looks for one. */
const LOOK_EVERY_MS = 1000;

interface Held<P> {
  feed?: Feed<P>;
  look?: NodeJS.Timeout;
  /** Settles once the feed has caught up (or is being looked for). */
  ready?: Promise<void>;
  /** Subscriptions waiting for `ready`: the entry stays while any waits. */
  preparing: number;
}

/**
 * Keeps a session's transcript feed running while any of its three topics
 * (`transcript:`, `transcript_items:`, `session_status:`) is held (contract
 * §5.5: upstream work runs only while a topic has subscribers). A sid whose
 * file does not exist yet is looked for every second until it appears; its
 * subscribers were told size 0, so that feed publishes from the start.
 */
export class TranscriptTopics<P extends { [K in keyof P]: FeedConsumer }> {
  private readonly held = new Map<string, Held<P>>();
  /** Sids whose file appeared after a subscriber was told it was empty. */
  readonly late = new Set<string>();

  constructor(
    private readonly feeds: TranscriptFeeds<P>,
    private readonly hub: TopicHub,
    private readonly log: Logger,
  ) {
    hub.onHeld((name) => {
      const topic = parseTopic(name);
      if (topic?.param !== undefined && isFeedKind(topic.kind)) this.settle(topic.param);
    });
  }

  /** Before a subscription's snapshot: the sid's feed runs and has caught
   * up — also for a second subscriber that arrives while it is opening. */
  async prepare(sid: string): Promise<void> {
    let entry = this.held.get(sid);
    if (entry === undefined) {
      const fresh: Held<P> = { preparing: 0 };
      fresh.ready = this.start(sid, fresh);
      entry = fresh;
      this.held.set(sid, entry);
    }
    entry.preparing++;
    try {
      await entry.ready;
    } finally {
      entry.preparing--;
    }
  }

  private async start(sid: string, entry: Held<P>): Promise<void> {
    const feed = await this.feeds.open(sid).catch((error: unknown) => {
      this.log.warn({ err: error, sid }, "transcript: opening the feed failed");
      return undefined;
    });
    if (this.held.get(sid) !== entry) {
      feed?.release();
      return;
    }
    if (feed === undefined) {
      this.lookFor(sid, entry);
      return;
    }
    entry.feed = feed;
    await settled(feed);
  }

  /** Let the feed go once none of the sid's topics has a subscriber. */
  settle(sid: string): void {
    const entry = this.held.get(sid);
    if (entry === undefined || entry.preparing > 0) return;
    for (const kind of FEED_KINDS) if (this.hub.count(`${kind}:${sid}`) > 0) return;
    this.held.delete(sid);
    clearTimeout(entry.look);
    entry.feed?.release();
    this.late.delete(sid);
  }

  private lookFor(sid: string, entry: Held<P>): void {
    entry.look = setTimeout(async () => {
      if (this.held.get(sid) !== entry) return;
      this.late.add(sid);
      const feed = await this.feeds.open(sid).catch((error: unknown) => {
        this.log.warn({ err: error, sid }, "transcript: looking for the file failed");
        return undefined;
      });
      if (this.held.get(sid) !== entry) {
        feed?.release();
        return;
      }
      if (feed === undefined) {
        this.late.delete(sid);
        this.lookFor(sid, entry);
        return;
      }
      entry.feed = feed;
      entry.look = undefined;
      await settled(feed);
      // The status topic was served empty until now.
      this.hub.invalidate(`session_status:${sid}`);
    }, LOOK_EVERY_MS);
    entry.look.unref();
  }

  dispose(): void {
    for (const entry of this.held.values()) {
      clearTimeout(entry.look);
      entry.feed?.release();
    }
    this.held.clear();
  }
}

/** Wait for every part of a feed that has reads of its own to finish them. */
async function settled<P>(feed: Feed<P>): Promise<void> {
  await Promise.all(
    (Object.values(feed.parts as object) as FeedConsumer[]).map((p) => p.settled?.()),
  );
}
