import { stat } from "node:fs/promises";
import { utf8Length } from "../../contract/frames.js";
import type { SessionErrorEntry, SessionStatusSnapshot } from "../../contract/session-status.js";
import { readTodoFile } from "../../harness/claude/todos.js";
import { type ApiErrorTurn, newSessionFold, type SessionFold } from "../../harness/fold-state.js";
import { freshReads } from "../../harness/fresh-read.js";
import { foldLines } from "../../harness/session-fold.js";
import { ms, type StatusFacts, statusSnapshot } from "../../harness/status-snapshot.js";
import { listSubagents } from "../../harness/transcript-files.js";
import { readLines } from "../../harness/transcript-lines.js";
import type { Logger } from "../../util/logger.js";
import type { Sessions } from "../sessions/sessions.js";
import type { TopicHub } from "../topic-hub.js";
import { emptySessionStatus } from "./empty-status.js";
import type { Feed, FeedConsumer, FeedInfo, TranscriptFeeds } from "./feeds.js";

// `session_status:<sid>` and `session_errors` (contract §5.4) from the
// transcript feed: the status fold is one more consumer of the feed's lines
// (harness/session-fold.ts); the files beside the transcript — the todo file,
// the sub-agents' transcripts and metas — are read without blocking after a
// change, and the value is built when the hub asks for it, at most once per
// 100 ms (the pace rule).

/** Sub-agent transcripts followed per session (the newest by name order
 * beyond this are listed without their own fold). */
const MAX_FOLDED_AGENTS = 64;

interface AgentTail {
  identity: string;
  offset: number;
  fold: SessionFold;
}

/** The status fold of one transcript feed. */
export class StatusFold implements FeedConsumer {
  private fold: SessionFold;
  private facts: StatusFacts = { subagents: [] };
  private readonly agentTails = new Map<string, AgentTail>();
  private first: Promise<void> | undefined;
  /** Whether the files beside the transcript were read at least once. */
  private factsRead = false;
  /** What the last facts read saw of the fold, to skip reads nothing asks for. */
  private seen = { todosAt: null as string | null, agents: "" };

  constructor(
    private readonly info: FeedInfo,
    private readonly changed: (sid: string) => void,
    private readonly log: Logger,
  ) {
    this.fold = newSessionFold(info.harness);
  }

  /** A sub-agent's own feed carries no status topic: nothing to fold. */
  private get main(): boolean {
    return this.info.agentId === undefined;
  }

  lines(batch: Parameters<FeedConsumer["lines"]>[0], caughtUp: boolean): void {
    if (!this.main) return;
    foldLines(this.fold, batch);
    if (!caughtUp) return;
    this.changed(this.info.sid);
    this.readFacts();
  }

  reset(): void {
    this.fold = newSessionFold(this.info.harness);
    this.facts = { subagents: [] };
    this.agentTails.clear();
    this.seen = { todosAt: null, agents: "" };
    this.factsRead = false;
    if (this.main) this.changed(this.info.sid);
  }

  /** Resolves once the files beside the transcript were read after the
   * catch-up: the first snapshot is complete, not fold-only. */
  settled(): Promise<void> {
    if (!this.main) return Promise.resolve();
    this.first ??= this.readFacts();
    return this.first;
  }

  snapshot(): SessionStatusSnapshot {
    return statusSnapshot(this.fold, this.facts);
  }

  apiError(): ApiErrorTurn | null {
    return this.fold.apiError;
  }

  /** Read the todo file and the sub-agents again: each call is answered by a
   * read that started after it (callers that ask together share one). */
  private readonly readFacts = freshReads(() =>
    this.factsPass().catch((error: unknown) =>
      this.log.warn({ err: error, sid: this.info.sid }, "session status: reading its files failed"),
    ),
  );

  private async factsPass(): Promise<void> {
    if (this.info.harness !== "claude") return;
    const { sid, home, path } = this.info;
    const fold = this.fold;
    const agentsKey = fold.agents.map((a) => `${a.toolUseId}:${a.status}`).join(",");
    const running = fold.agents.some((a) => a.status === "running");
    const first = !this.factsRead;
    const facts: StatusFacts = { ...this.facts };
    if (first || fold.todosAt !== this.seen.todosAt) facts.todoFile = await readTodoFile(home, sid);
    // Sub-agents: when the calls that spawn them change, and while one runs
    // (its own transcript moves while the parent waits).
    if (first || running || agentsKey !== this.seen.agents) {
      const files = await listSubagents(path, sid);
      facts.subagents = await Promise.all(
        files.map(async (f, i) => {
          const tail =
            i < MAX_FOLDED_AGENTS ? await this.followAgent(f.agentId, f.path) : undefined;
          return {
            agentId: f.agentId,
            meta: f.meta,
            ...(tail === undefined ? {} : { fold: tail.fold, mtimeMs: tail.mtimeMs }),
          };
        }),
      );
    }
    if (this.fold !== fold) return; // reset meanwhile
    this.seen = { todosAt: fold.todosAt, agents: agentsKey };
    this.facts = facts;
    this.factsRead = true;
    this.changed(sid);
  }

  /** Fold what was appended to a sub-agent's transcript since the last look. */
  private async followAgent(
    agentId: string,
    path: string,
  ): Promise<{ fold: SessionFold; mtimeMs: number } | undefined> {
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch {
      this.agentTails.delete(agentId);
      return undefined;
    }
    const identity = `${st.dev}:${st.ino}`;
    let tail = this.agentTails.get(agentId);
    if (tail === undefined || tail.identity !== identity || st.size < tail.offset) {
      tail = { identity, offset: 0, fold: newSessionFold(this.info.harness, true) };
      this.agentTails.set(agentId, tail);
    }
    for await (const batch of readLines(path, tail.offset, { until: st.size })) {
      foldLines(tail.fold, batch);
      const last = batch.at(-1)!;
      tail.offset = last.offset + last.bytes;
    }
    return { fold: tail.fold, mtimeMs: st.mtimeMs };
  }
}

/** The feed parts this module needs. */
export interface StatusParts {
  status: StatusFold;
}

/**
 * Serve `session_status:<sid>` (from the session's feed when its transcript
 * exists; known-empty lists otherwise) and `session_errors`. While someone
 * holds `session_errors`, every live session's feed is kept open, so an error
 * shows without anyone subscribing to that session's status (its feeds and
 * timer go when the last subscriber does, shutdown included).
 */
export function serveSessionStatus<
  P extends StatusParts & { [K in keyof P]: FeedConsumer },
>(input: {
  instanceId: string;
  hub: TopicHub;
  sessions: Sessions;
  feeds: TranscriptFeeds<P>;
  log: Logger;
}): void {
  const { hub, sessions, feeds, instanceId } = input;
  hub.provideValue("session_status", (sid, budget) => {
    const status = sid === undefined ? undefined : feeds.running(sid)?.parts.status;
    if (sid === undefined || status === undefined) return emptySessionStatus(sid);
    return fitStatus({ sid, ...status.snapshot() }, budget);
  });
  const liveSids = () => sessions.peers().peers.map((p) => p.sid);
  hub.provideValue("session_errors", () => {
    const errors: SessionErrorEntry[] = [];
    for (const sid of liveSids()) {
      const error = feeds.running(sid)?.parts.status.apiError();
      if (error === null || error === undefined || error.text === "") continue;
      errors.push({
        sid,
        instance: instanceId,
        text: error.text,
        occurred_at: ms(error.occurredAt) ?? 0,
      });
    }
    return { errors };
  });
  const watch = new ErrorWatch(feeds, liveSids, () => hub.invalidate("session_errors"), input.log);
  hub.onHeld((name, count) => {
    if (name === "session_errors") watch.hold(count > 0);
  });
  sessions.onChange(() => {
    watch.sync();
    hub.invalidate("session_errors");
  });
}

/** How often live sessions without a transcript are looked at again. */
const LOOK_AGAIN_MS = 2000;

/** Keeps the feeds of live sessions open while `session_errors` is held. */
class ErrorWatch<P> {
  private active = false;
  private readonly feeds = new Map<string, Feed<P> | "opening" | "missing">();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: TranscriptFeeds<P & { [K in keyof P]: FeedConsumer }>,
    private readonly live: () => string[],
    private readonly changed: () => void,
    private readonly log: Logger,
  ) {}

  hold(on: boolean): void {
    if (on === this.active) return;
    this.active = on;
    if (on) {
      this.sync();
      this.timer = setInterval(() => this.sync(true), LOOK_AGAIN_MS);
      this.timer.unref();
      return;
    }
    clearInterval(this.timer);
    for (const f of this.feeds.values()) if (typeof f === "object") f.release();
    this.feeds.clear();
  }

  /** Open feeds for sessions that became live; let go of those that left.
   * `retry`: look again for the transcripts not found before. */
  sync(retry = false): void {
    if (!this.active) return;
    const live = new Set(this.live());
    for (const [sid, f] of this.feeds) {
      if (live.has(sid)) continue;
      if (typeof f === "object") f.release();
      this.feeds.delete(sid);
    }
    for (const sid of live) {
      const held = this.feeds.get(sid);
      if (held !== undefined && !(retry && held === "missing")) continue;
      this.feeds.set(sid, "opening");
      this.source
        .open(sid)
        .catch((error: unknown) => {
          this.log.warn({ err: error, sid }, "session errors: opening the transcript failed");
          return undefined;
        })
        .then((feed) => {
          if (!this.active || this.feeds.get(sid) !== "opening") {
            feed?.release();
            return;
          }
          this.feeds.set(sid, feed ?? "missing");
          if (feed !== undefined) this.changed();
        });
    }
  }
}

/** A status value that fits the frame: the longest lists are halved until it
 * does (a session with thousands of agents or files is the only case). */
function fitStatus(
  value: SessionStatusSnapshot & { sid: string },
  budget: number,
): SessionStatusSnapshot & { sid: string } {
  let v = value;
  for (let i = 0; i < 32 && utf8Length(JSON.stringify(v)) > budget; i++) {
    const half = <T>(list: T[]) => list.slice(list.length >> 1);
    v = {
      ...v,
      external_files: half(v.external_files),
      background: half(v.background),
      teammates: half(v.teammates),
      agent_tree: {
        ...v.agent_tree,
        agents: half(v.agent_tree.agents),
        teammates: half(v.agent_tree.teammates),
      },
    };
  }
  return v;
}
