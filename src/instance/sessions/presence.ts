import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AgentInfo, AgentsData } from "../../contract/agents.js";
import { utf8Length } from "../../contract/frames.js";
import { isSid, type Sid } from "../../contract/identifiers.js";
import {
  type LiveSessionFile,
  rowsBySession,
  sessionFiles,
  tmuxNamespace,
  tmuxPane,
} from "../../harness/claude/session-files.js";
import { readThreadLocks } from "../../harness/codex/thread-locks.js";
import { freshReads } from "../../harness/fresh-read.js";
import type { Logger } from "../../util/logger.js";
import type { TopicHub } from "../topic-hub.js";
import type { HarnessPresence, Sessions } from "./sessions.js";

// Presence from the harness (DR-0025): which sessions run, read from the
// harness's own files — Claude Code's `sessions/*.json` (harness.md §5.1) or
// Codex's `thread-writer-locks/` (§7.4). Watched only while someone holds
// `peers` or `agents`; read fresh, with or without subscribers, before any
// decision that acts on it.

/** A confirmation pass this often while watching: it finds a process that
 * died and left its file behind, which no watch reports. */
export const PRESENCE_POLL_MS = 5000;
/** A pass this long after a watch event (events come in bursts) or after a
 * watch is armed (a change at that instant can be lost). */
const SETTLE_MS = 30;

export type HarnessKind = "claude" | "codex";

/** One pass, as presence uses it. */
interface Snapshot {
  sessions: Map<Sid, HarnessPresence>;
  agents: AgentInfo[];
  readAt: number;
  truncated: boolean;
}

/** Where presence comes from: the directory to watch, and passes over it
 * (undefined: the pass failed). Every finished pass is told to `onPass`,
 * whoever asked for it. */
interface Source {
  dir: string;
  fresh(): Promise<unknown>;
  /** The confirmation poll's pass (may be cheaper than a fresh one). */
  confirm(): Promise<unknown>;
  /** Returns how to stop listening. */
  onPass(listener: (snapshot: Snapshot | undefined, readAt: number) => void): () => void;
}

export class Presence {
  private readonly source: Source;
  private watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private rearm: NodeJS.Timeout | undefined;
  private watching = false;
  private disposed = false;
  private agents: AgentsData = { agents: [] };
  private agentsJson = "";
  private lastProblem: string | undefined;
  private readonly stopListening: () => void;

  constructor(
    kind: HarnessKind,
    private readonly configHome: string,
    private readonly instanceId: string,
    private readonly sessions: Sessions,
    private readonly hub: TopicHub,
    private readonly log: Logger,
  ) {
    this.source = kind === "claude" ? this.claude() : this.codex();
    this.stopListening = this.source.onPass((snapshot, readAt) => this.apply(snapshot, readAt));
    sessions.askHarnessWith(() => void this.fresh());
    hub.provideValue("agents", (_param, budget) => fitAgents(this.agents, budget));
    hub.onHeld((name) => {
      if (name === "peers" || name === "agents") this.watch(this.held());
    });
  }

  /** A pass that started after this call, applied: what decisions act on.
   * Never fails (a failed pass changes nothing). */
  async fresh(): Promise<void> {
    if (this.disposed) return;
    await this.source.fresh().catch(() => {});
  }

  private held(): boolean {
    return this.hub.count("peers") + this.hub.count("agents") > 0;
  }

  private apply(snapshot: Snapshot | undefined, readAt: number): void {
    if (this.disposed) return;
    try {
      this.applyPass(snapshot, readAt);
    } catch (error) {
      this.log.error({ err: error }, "harness files: a pass could not be applied");
    }
  }

  private applyPass(snapshot: Snapshot | undefined, readAt: number): void {
    this.sessions.setHarness(snapshot?.sessions, readAt);
    if (snapshot === undefined) return;
    if (snapshot.truncated) this.problem("harness files: more than the bound, the rest unread");
    const json = JSON.stringify(snapshot.agents);
    // Unchanged agents are not sent again just because a pass ran: polled_at
    // is the pass the value came from (DR-0025).
    if (json === this.agentsJson) return;
    this.agentsJson = json;
    this.agents = { agents: snapshot.agents, polled_at: snapshot.readAt };
    this.hub.invalidate("agents");
  }

  private problem(msg: string, error?: string): void {
    const key = `${msg}${error ?? ""}`;
    if (key === this.lastProblem) return;
    this.lastProblem = key;
    this.log.warn({ dir: this.source.dir, error }, msg);
  }

  /** Claude Code: `sessions/*.json`, through the one shared reader of the
   * config home (direct delivery's lookups feed presence too). */
  private claude(): Source {
    const reader = sessionFiles(this.configHome);
    return {
      dir: reader.dir,
      fresh: () => reader.fresh(),
      confirm: () => reader.confirm(),
      onPass: (listener) =>
        reader.onRead((read) => {
          if (!read.ok) {
            this.problem("harness files: the directory could not be read", read.error);
            return listener(undefined, read.readAt);
          }
          const { instanceId, configHome } = this;
          listener(claudeSnapshot(read, instanceId, configHome), read.readAt);
        }),
    };
  }

  /** Codex: a running thread holds `thread-writer-locks/<thread>.lock`; it is
   * reachable by nothing here and has no pid (so no `agents` row). */
  private codex(): Source {
    const listeners: ((snapshot: Snapshot | undefined, readAt: number) => void)[] = [];
    const fresh = freshReads(async () => {
      const read = await readThreadLocks(this.configHome);
      if (!read.ok) this.problem("harness files: the directory could not be read", read.error);
      const snapshot: Snapshot | undefined = read.ok
        ? {
            sessions: new Map(
              read.threads.map((sid) => [sid, { sid, waiting: false, reachable: false }]),
            ),
            agents: [],
            readAt: read.readAt,
            truncated: read.truncated,
          }
        : undefined;
      for (const l of listeners) l(snapshot, read.readAt);
    });
    return {
      dir: join(this.configHome, "thread-writer-locks"),
      fresh,
      confirm: fresh,
      onPass: (listener) => {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    };
  }

  /** Watch while `on`: the directory and its parent (a watch cannot see its
   * own directory come or go), a pass shortly after arming, and the
   * confirmation poll. */
  private watch(on: boolean): void {
    if (on === this.watching || this.disposed) return;
    this.watching = on;
    if (!on) {
      this.unwatch();
      return;
    }
    this.arm();
    this.poll = setInterval(() => {
      // A directory (or its parent) missing at arming is watched once there.
      if (this.watchers.length < 2) this.arm();
      else void this.source.confirm().catch(() => {});
    }, PRESENCE_POLL_MS);
    this.poll.unref();
  }

  private arm(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    const dir = this.source.dir;
    const name = basename(dir);
    const add = (path: string, onEvent: (file: string | null) => void) => {
      try {
        const w = watch(path, { persistent: false }, (_event, file) => onEvent(file));
        w.on("error", () => {
          // The watched directory went: watch again where it can be.
          w.close();
          this.watchers = this.watchers.filter((x) => x !== w);
          this.passSoon();
        });
        this.watchers.push(w);
      } catch {
        // Not there (yet): the parent's watch or the poll sees it come.
      }
    };
    add(dir, () => this.passSoon());
    add(dirname(dir), (file) => {
      if (file !== null && file !== name) return;
      // The directory came, went or was replaced: watch it anew.
      this.rearmSoon();
    });
    this.passSoon();
  }

  private rearmSoon(): void {
    if (this.rearm !== undefined) return;
    this.rearm = setTimeout(() => {
      this.rearm = undefined;
      if (this.watching && !this.disposed) this.arm();
    }, SETTLE_MS);
  }

  private passSoon(): void {
    if (this.soon !== undefined) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      if (this.watching) void this.fresh();
    }, SETTLE_MS);
  }

  private unwatch(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    clearInterval(this.poll);
    clearTimeout(this.soon);
    clearTimeout(this.rearm);
    this.poll = this.soon = this.rearm = undefined;
  }

  /** Whether the watch is armed now (tests, metrics). */
  get armed(): boolean {
    return this.watching;
  }

  dispose(): void {
    this.disposed = true;
    this.stopListening();
    this.unwatch();
  }
}

/** Presence and `agents` rows from Claude Code state files of running
 * processes. A row whose session id is no sid names nobody ccmsg can address. */
function claudeSnapshot(
  { rows, readAt, truncated }: { rows: LiveSessionFile[]; readAt: number; truncated: boolean },
  instance: string,
  configHome: string,
): Snapshot {
  const valid = rows.filter((r) => isSid(r.sessionId));
  const sessions = new Map<Sid, HarnessPresence>();
  for (const [sid, r] of rowsBySession(valid)) {
    const h: HarnessPresence = {
      sid,
      waiting: r.waitingFor !== undefined || r.status === "waiting",
      reachable: r.messagingSocketPath !== undefined || r.tmux !== undefined,
    };
    if (r.cwd !== undefined) h.cwd = r.cwd;
    if (r.name !== undefined) h.name = r.name;
    sessions.set(sid, h);
  }
  const agents = valid.map((r) => agentOf(r, instance, configHome));
  return { sessions, agents, readAt, truncated };
}

/** An `agents` row (contract §5.4) from one state file. */
export function agentOf(r: LiveSessionFile, instance: string, configDir: string): AgentInfo {
  const a: AgentInfo = {
    sid: r.sessionId,
    instance,
    pid: r.pid,
    cwd: r.cwd ?? "",
    kind: r.kind ?? "unknown",
    started_at: Math.max(0, Math.round(r.startedAt ?? r.processStartedAt ?? 0)),
    config_dir: configDir,
  };
  if (r.name !== undefined) a.name = r.name;
  if (r.status !== undefined) a.status = r.status;
  if (r.waitingFor !== undefined) a.waiting_for = r.waitingFor;
  if (r.state !== undefined) a.state = r.state;
  if (r.jobId !== undefined) a.background_id = r.jobId;
  const pane = r.tmux === undefined ? undefined : tmuxPane(r.tmux);
  if (pane !== undefined) {
    a.terminal_id = pane;
    const ns = r.tmuxSocket === undefined ? undefined : tmuxNamespace(r.tmuxSocket);
    if (ns !== undefined) a.terminal_namespace = ns;
  }
  return a;
}

/** The agents value within `budget` bytes of data: one frame cannot be split,
 * so rows past the budget are left out (a thousand rows fit many times over). */
function fitAgents(data: AgentsData, budget: number): AgentsData {
  if (utf8Length(JSON.stringify(data)) <= budget) return data;
  const agents: AgentInfo[] = [];
  let used = utf8Length(JSON.stringify({ ...data, agents: [] }));
  for (const a of data.agents) {
    const size = utf8Length(JSON.stringify(a)) + 1;
    if (used + size > budget) break;
    agents.push(a);
    used += size;
  }
  return { ...data, agents };
}
