import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { freshReads } from "../../harness/fresh-read.js";
import { locateTranscript, type TranscriptHarness } from "../../harness/transcript-files.js";
import { readLines, type TranscriptLine } from "../../harness/transcript-lines.js";
import type { Logger } from "../../util/logger.js";

// One tail and one fold per transcript (harness.md §6.2 "reading rules"): a
// feed reads the file once from the start in bounded chunks, then follows its
// appends, and hands every complete line to a fixed set of consumers — the
// raw `transcript:<sid>` publisher, the typed item index, the status fold —
// so three topics and the read ops share one pass over the file. A feed
// lives while someone holds it (a topic subscription, a running read op) and
// a little longer, so a burst of reads does not re-read a large file.

/** Told every complete line of one transcript, in file order. */
export interface FeedConsumer {
  /** First the catch-up from offset 0 (`caughtUp` false: publish nothing
   * then), then appends as they are written (`caughtUp` true). */
  lines(batch: readonly TranscriptLine[], caughtUp: boolean): void;
  /** The file was replaced or shortened: drop all state; lines restart at 0. */
  reset(): void;
  /** Resolves once the consumer's own reads after the catch-up are done (the
   * status fold reads the files beside the transcript), so a snapshot taken
   * then is complete. Absent: nothing to wait for. */
  settled?(): Promise<void>;
}

/** Which transcript a feed follows. */
export interface FeedInfo {
  sid: string;
  /** Set for a sub-agent's own transcript. */
  agentId?: string;
  path: string;
  harness: TranscriptHarness;
  /** The config home whose transcript tree holds the file. */
  home: string;
}

/** A held, caught-up feed. */
export interface Feed<P> {
  readonly info: FeedInfo;
  readonly parts: P;
  /** Where the complete lines read so far end (a later delta starts here). */
  consumed(): number;
  /** The file's size at the last read. */
  size(): number;
  /** Read what was appended now, rather than at the next change event. */
  refresh(): Promise<void>;
  /** Let go; the feed stops once nobody holds it (after a linger). */
  release(): void;
}

export interface FeedsOptions<P> {
  harness: TranscriptHarness;
  home: string;
  log: Logger;
  /** The transcript path a sid announced, if any. */
  announced(sid: string): string | undefined;
  /** The consumers of one feed. */
  parts(info: FeedInfo): P;
  /** How long an unheld feed stays (default 30 s). */
  lingerMs?: number;
  /** The change poll, behind inotify (default 1 s). */
  pollMs?: number;
}

/** The transcript feeds of one instance, by (sid, agent). */
export class TranscriptFeeds<P extends { [K in keyof P]: FeedConsumer }> {
  private readonly tails = new Map<string, Tail<P>>();
  private readonly opening = new Map<string, Promise<Tail<P> | undefined>>();

  constructor(private readonly options: FeedsOptions<P>) {}

  /** The caught-up feed of a session's transcript (or one agent's), held
   * until `release()`; undefined when no file is found. */
  async open(sid: string, agentId?: string): Promise<Feed<P> | undefined> {
    const key = agentId === undefined ? sid : `${sid}/${agentId}`;
    let tail = this.tails.get(key);
    if (tail === undefined || tail.closed) {
      let pending = this.opening.get(key);
      if (pending === undefined) {
        pending = this.start(key, sid, agentId).finally(() => this.opening.delete(key));
        this.opening.set(key, pending);
      }
      tail = await pending;
      if (tail === undefined) return undefined;
    }
    const hold = tail.hold();
    await tail.caughtUp;
    return hold;
  }

  /** A feed already running for a sid (no file access), if any. */
  running(sid: string): Feed<P> | undefined {
    const tail = this.tails.get(sid);
    return tail === undefined || tail.closed ? undefined : tail.peek();
  }

  private async start(key: string, sid: string, agentId?: string): Promise<Tail<P> | undefined> {
    const { harness, home } = this.options;
    const path = await locateTranscript(harness, home, sid, {
      announced: this.options.announced(sid),
      agentId,
    });
    if (path === undefined) return undefined;
    const info: FeedInfo = { sid, path, harness, home, ...(agentId ? { agentId } : {}) };
    const tail = new Tail(info, this.options.parts(info), this.options, () => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    this.tails.set(key, tail);
    tail.begin();
    return tail;
  }

  dispose(): void {
    for (const tail of this.tails.values()) tail.close();
    this.tails.clear();
  }
}

/** One followed file. */
class Tail<P extends { [K in keyof P]: FeedConsumer }> {
  closed = false;
  readonly caughtUp: Promise<void>;
  private markCaughtUp!: () => void;
  private isCaughtUp = false;
  private holders = 0;
  private offset = 0;
  private fileSize = 0;
  private identity: string | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private linger: NodeJS.Timeout | undefined;

  constructor(
    readonly info: FeedInfo,
    readonly parts: P,
    private readonly options: FeedsOptions<P>,
    private readonly onClose: () => void,
  ) {
    this.caughtUp = new Promise((resolve) => {
      this.markCaughtUp = resolve;
    });
  }

  begin(): void {
    try {
      this.watcher = watch(this.info.path, { persistent: false }, () => void this.read());
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No inotify for this file: the poll alone follows it.
    }
    this.poll = setInterval(() => void this.read(), this.options.pollMs ?? 1000);
    this.poll.unref();
    void this.read();
  }

  peek(): Feed<P> {
    return this.handle(() => {});
  }

  hold(): Feed<P> {
    this.holders++;
    if (this.linger !== undefined) clearTimeout(this.linger);
    this.linger = undefined;
    let released = false;
    return this.handle(() => {
      if (released) return;
      released = true;
      if (--this.holders === 0 && !this.closed) {
        this.linger = setTimeout(() => this.close(), this.options.lingerMs ?? 30_000);
        this.linger.unref();
      }
    });
  }

  private handle(release: () => void): Feed<P> {
    return {
      info: this.info,
      parts: this.parts,
      consumed: () => this.offset,
      size: () => this.fileSize,
      refresh: () => this.read(),
      release,
    };
  }

  /** Read what is new: each call is answered by a pass that started after it
   * (callers that ask together share one). */
  read(): Promise<void> {
    return this.closed ? Promise.resolve() : this.readFresh();
  }

  private readonly readFresh = freshReads(() =>
    this.pass().catch((error: unknown) =>
      this.options.log.warn(
        { err: error, path: this.info.path, sid: this.info.sid },
        "transcript: read failed",
      ),
    ),
  );

  private async pass(): Promise<void> {
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(this.info.path);
    } catch {
      // Gone (rotated away, deleted): keep what was read; a new file at the
      // same path starts over when it appears.
      this.finishCatchUp();
      return;
    }
    const identity = `${st.dev}:${st.ino}`;
    if (this.identity !== undefined && (identity !== this.identity || st.size < this.offset)) {
      this.options.log.info(
        { path: this.info.path, sid: this.info.sid },
        "transcript: the file was replaced or shortened; reading it again",
      );
      this.offset = 0;
      for (const part of Object.values(this.parts) as FeedConsumer[]) part.reset();
    }
    this.identity = identity;
    this.fileSize = st.size;
    if (st.size > this.offset) {
      for await (const batch of readLines(this.info.path, this.offset, { until: st.size })) {
        if (this.closed) return;
        const last = batch.at(-1)!;
        this.offset = last.offset + last.bytes;
        for (const part of Object.values(this.parts) as FeedConsumer[])
          part.lines(batch, this.isCaughtUp);
      }
    }
    this.finishCatchUp();
  }

  private finishCatchUp(): void {
    if (this.isCaughtUp) return;
    this.isCaughtUp = true;
    this.markCaughtUp();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.linger);
    this.finishCatchUp();
    this.onClose();
  }
}
