import type { GithubSyncFacts } from "../board/sync/github.js";
import type { LinearSyncFacts } from "../board/sync/linear.js";
import type { HudStatus } from "../contract/ecc/hud.js";
import {
  globsOverlap,
  isOwn,
  type KeyedReservation,
  liveReservations,
  RESERVATIONS_NS,
} from "../contract/reservations.js";
import { readInputFields, str } from "../harness/claude/statusline-input.js";
import { readTodos } from "../harness/claude/todos.js";
import { DEFAULT_BASH_TIMEOUT_SECONDS, staleShellCalls } from "../harness/loop-signals.js";
import {
  type ConflictedWorktree,
  conflictedWorktrees,
  type GitProbe,
  probeGit,
} from "../probes/git.js";
import { type GithubFacts, githubFacts } from "../probes/github.js";
import { repoName } from "../probes/repo-names.js";
import { readSessionLlm, type SessionLlm } from "../state/llm-session-file.js";
import { codexConfigHome, stateFiles } from "../state/paths.js";
import type { CheckRun } from "../store/check-runs.js";
import type { SyncRun } from "../store/sync-runs.js";
import { decideControls } from "./controls.js";
import { type DmuxProject, dmuxWorker, findDmuxRoot, readDmuxProject } from "./dmux.js";
import { readBridge } from "./ecc-bridge.js";
import { readHandoff } from "./handoff.js";
import { staleSalvageQueue } from "./salvage.js";
import {
  controlFacts,
  openSessionContext,
  type Places,
  type SessionContext,
} from "./session-context.js";
import { readSession, type SessionReading, sessionTokens } from "./session-reading.js";
import type { ConflictedItem, WorkSignals } from "./work-queues.js";
import { hudAgent, sessionWorkers } from "./workers.js";

// `ccmsg hud`: the `ecc.hud-status.v1` payload for one session, each section
// filled from a source that really exists on this machine. A signal nobody
// can read takes a missing value (null, [] or "unknown") — never a healthy
// default (ecc-surfaces §1.4).

export const HUD_SCHEMA_VERSION = "ecc.hud-status.v1" satisfies HudStatus["schema_version"];

export interface HudPlaces extends Places {
  /** Where ECC's metrics bridge lives (default: the OS temp dir). */
  bridgeDir?: string;
  /** The Claude Code config home, for todo files and transcripts. */
  claudeHome: string;
  /** The Codex home, for a Codex session's rollout (default: CODEX_HOME). */
  codexHome?: string;
  /** "Now", for tests (Unix ms). */
  now?: number;
}

/** How many agents the HUD lists (running first, then the latest). */
const MAX_HUD_AGENTS = 20;
/** A quiet session's worktree is salvage after this long by default. */
const DEFAULT_QUIET_SECONDS = 3600;

/** What was read, kept beside the payload for the queue commands. */
export interface HudResult {
  payload: HudStatus;
  context: SessionContext;
  git: GitProbe;
  github: GithubFacts | undefined;
  work: WorkSignals | undefined;
  /** The name of each of `checks.local`, in order: the payload keeps ECC's
   * `{ command, status }`, a person reads checks by name. */
  localCheckNames: string[];
  /** The session's transcript as read, when it has one. */
  reading: SessionReading | undefined;
  /** What an LLM gateway reported of the session (its busy mark, cache
   * window and spend), when one did. */
  gateway: SessionLlm | undefined;
}

/** The transcript of the target session, folded (resuming from the cache). */
function readTarget(ctx: SessionContext, places: HudPlaces): Promise<SessionReading | undefined> {
  const { target, env } = ctx;
  if (target.sid === null) return Promise.resolve(undefined);
  const codex = target.harness === "codex";
  return readSession(codex ? "codex" : "claude", target.sid, {
    home: codex ? (places.codexHome ?? codexConfigHome(env)) : places.claudeHome,
    announced: target.session?.transcript_path ?? str(target.statusline?.transcript_path),
    cacheDir: stateFiles(ctx.stateDir).foldCache,
  });
}

export async function collectHud(places: HudPlaces): Promise<HudResult> {
  const ctx = await openSessionContext(places);
  try {
    return await collect(ctx, places);
  } finally {
    ctx.reader?.close();
  }
}

async function collect(ctx: SessionContext, places: HudPlaces): Promise<HudResult> {
  const { target, config, reader, env } = ctx;
  // The slow reads (git, gh) start first and run while the local files and
  // the store are read.
  const gitPromise = probeGit(target.cwd, { env });
  // GitHub is asked about the worktree's repository only: without one there
  // is nothing to ask, and the `pr` control is blocked by git first.
  const githubPromise = gitPromise.then((g) =>
    g.state === "ok" ? githubFacts(g.toplevel, g.branch, env) : undefined,
  );
  const conflictsPromise = gitPromise.then((g) =>
    g.state === "ok" ? conflictedWorktrees(g, { env }) : undefined,
  );
  const now = places.now ?? Date.now();
  const salvagePromise = gitPromise.then((g) =>
    g.state === "ok"
      ? staleSalvageQueue(
          g,
          reader?.sessions?.recent(64),
          now,
          (config.quiet_session_seconds ?? DEFAULT_QUIET_SECONDS) * 1000,
          { env },
        )
      : undefined,
  );
  const readingPromise = readTarget(ctx, places);
  const dmuxPromise = gitPromise.then((g) =>
    dmuxAround(g.state === "ok" ? g.mainRoot : target.cwd),
  );
  const input = readInputFields(target.statusline);
  const todos = target.sid === null ? undefined : readTodos(places.claudeHome, target.sid);
  const bridge = target.sid === null ? undefined : readBridge(target.sid, places.bridgeDir);
  const work = await reader?.workSignals();
  const [githubSync, linearSync] = await Promise.all([
    reader?.syncRun("github"),
    reader?.syncRun("linear"),
  ]);
  const [git, github, worktreeConflicts, salvage, reading, dmux] = await Promise.all([
    gitPromise,
    githubPromise,
    conflictsPromise,
    salvagePromise,
    readingPromise,
    dmuxPromise,
  ]);
  const fold = reading?.fold;
  const gitOk = git.state === "ok" ? git : undefined;
  const handoff = await readHandoff(
    config.handoff_path,
    gitOk?.toplevel ?? null,
    gitOk?.head ?? null,
    env,
  );
  const runs = gitOk === undefined ? undefined : await reader?.checkRuns(gitOk.toplevel);
  const local = gitOk === undefined ? undefined : localChecks(runs, ctx);
  const gh = github?.state === "ok" ? github : undefined;

  const remaining =
    input.remainingPct === undefined
      ? undefined
      : Math.round(Math.min(100, Math.max(0, input.remainingPct)));
  // A gateway's count, when one saw the session, over the harness's own.
  const gateway = target.sid === null ? undefined : readSessionLlm(ctx.stateDir, target.sid);
  const spent = gateway !== undefined && gateway.requests > 0 ? gateway : undefined;
  const sessionUsd =
    spent?.usd !== undefined
      ? spent.usd
      : input.costUsd !== undefined && input.costUsd >= 0
        ? input.costUsd
        : null;
  const budgetUsd = config.budget_usd ?? null;

  const dirty = gitOk?.dirty ?? null;
  const conflicts = gitOk?.unmergedPaths?.length ?? null;
  const staleAfter = config.stale_bash_seconds ?? DEFAULT_BASH_TIMEOUT_SECONDS;
  const stale = fold === undefined ? undefined : staleShellCalls(fold, now, staleAfter);
  const reasons: string[] = [];
  if (fold?.apiError) reasons.push(`stopped on an API error: ${firstLine(fold.apiError.text)}`);
  if (stale !== undefined && stale.length > 0)
    reasons.push(
      `${plural(stale.length, "shell call")} pending for more than ${Math.round(staleAfter / 60)} min`,
    );
  if (dirty === true) reasons.push("dirty worktree");
  if (conflicts !== null && conflicts > 0) reasons.push(plural(conflicts, "conflicted path"));
  if (work !== undefined && work.blocked > 0)
    reasons.push(plural(work.blocked, "blocked work item"));
  if (work !== undefined && work.needsReview > 0)
    reasons.push(
      `${plural(work.needsReview, "work item")} need${work.needsReview === 1 ? "s" : ""} review`,
    );
  const reservations = reservationsAround(
    await reader?.kvEntries(RESERVATIONS_NS),
    target.sid,
    gitOk?.toplevel ?? (target.cwdKnown ? target.cwd : undefined),
    now,
  );
  const held = reservations?.others.filter((r) => r.exclusive) ?? [];
  if (held.length > 0)
    reasons.push(
      `${plural(held.length, "path")} reserved by other sessions: ${held
        .slice(0, 3)
        .map((r) => `${r.glob} (${r.holder.name ?? r.holder.sid ?? "the person"})`)
        .join(", ")}${held.length > 3 ? ", …" : ""}`,
    );
  // Never "ok" while an input is unknown: the worktree, the board, the
  // session's own calls (ecc-surfaces §1.4).
  const riskStatus =
    reasons.length > 0
      ? "attention"
      : dirty === null || conflicts === null || work === undefined || fold === undefined
        ? "unknown"
        : "ok";
  const tokens =
    spent !== undefined
      ? {
          input: spent.tokens.input,
          output: spent.tokens.output,
          cacheCreation: spent.tokens.cache_creation,
          cacheRead: spent.tokens.cache_read,
        }
      : reading === undefined
        ? undefined
        : sessionTokens(reading);
  const todoList =
    todos !== undefined || fold === undefined || fold.todos === null
      ? undefined
      : todoSummary(fold.todos);
  const place = { branch: gitOk?.branch ?? null, worktree: gitOk?.toplevel ?? null };

  const conflictQueue = conflictQueueOf(worktreeConflicts, work);
  // What the last GitHub sync of this worktree's repository read (any
  // repository's, outside a worktree); Linear's last sync.
  const synced = githubSyncFacts(githubSync, gitOk?.repoSlug ?? null);
  const linear = linearSync?.facts as LinearSyncFacts | null | undefined;
  const branchPr =
    gitOk?.branch == null ? undefined : synced?.facts.pullRequestsByBranch[gitOk.branch];

  const payload: HudStatus = {
    schema_version: HUD_SCHEMA_VERSION,
    generatedAt: new Date().toISOString(),
    context: {
      harness: target.harness,
      model: input.model ?? target.session?.model ?? fold?.context?.model ?? null,
      // The name `peers` shows for the same checkout (repoName).
      repo: gitOk === undefined ? null : repoName(gitOk.mainRoot, gitOk.remoteUrl),
      branch: gitOk?.branch ?? null,
      worktree: gitOk?.toplevel ?? null,
      sessionId: target.sid,
      contextWindow: {
        remainingPct: remaining ?? null,
        pressure: remaining === undefined ? "unknown" : pressure(remaining),
      },
    },
    // The transcript says everything; without one, ECC's metrics bridge
    // counts calls but knows nothing of pending or stale ones.
    toolCalls:
      fold !== undefined
        ? {
            total: fold.toolTotal,
            pending: Object.keys(fold.pending).length,
            stale: stale?.length ?? 0,
            lastTool:
              fold.lastTool === null
                ? null
                : {
                    name: fold.lastTool.name,
                    status: fold.lastTool.status,
                    finishedAt: fold.lastTool.finishedAt ?? "unknown",
                  },
          }
        : bridge === undefined
          ? "unknown"
          : { total: bridge.toolCount, pending: null, stale: null, lastTool: null },
    // The session's own agent tree, then the panes of the dmux project it
    // works in; unknown only when neither can be read.
    activeAgents:
      reading === undefined && dmux === undefined
        ? "unknown"
        : [
            ...(reading === undefined ? [] : sessionWorkers(reading, place)),
            ...(dmux?.panes.map((p) => dmuxWorker(dmux, p)) ?? []),
          ]
            .slice(0, MAX_HUD_AGENTS)
            .map(hudAgent),
    todos:
      todos !== undefined
        ? { inProgress: todos.inProgress, counts: { ...todos.counts } }
        : (todoList ?? null),
    checks: {
      local:
        local === undefined ? "unknown" : local.map(({ command, status }) => ({ command, status })),
      remote: gh?.remoteChecks ?? "unknown",
    },
    cost: {
      sessionUsd,
      budgetUsd,
      trend:
        sessionUsd === null || budgetUsd === null
          ? "unknown"
          : sessionUsd > budgetUsd
            ? "over-budget"
            : "within-budget",
      tokens:
        tokens === undefined
          ? null
          : {
              ...tokens,
              total: tokens.input + tokens.output + tokens.cacheCreation + tokens.cacheRead,
            },
    },
    risk: {
      status: riskStatus,
      reasons,
      dirtyWorktree: dirty,
      conflicts,
      manualReviewRequired: work === undefined ? null : work.needsReview > 0,
      reservations:
        reservations === undefined
          ? "unknown"
          : {
              held: reservations.held.map(hudReservation),
              others: reservations.others.map(hudReservation),
            },
    },
    queueState: {
      // Counts gh gives now, else the last sync's; discussions only from a
      // sync (gh has no discussion listing: the sync asks GraphQL).
      github:
        gh || synced
          ? {
              openPullRequests: gh?.openPullRequests ?? synced?.facts.openPullRequests ?? null,
              openIssues: gh?.openIssues ?? synced?.facts.openIssues ?? null,
              openDiscussions: synced?.facts.openDiscussions ?? null,
              ...(synced === undefined ? {} : { syncedAt: synced.at }),
            }
          : "unknown",
      mergeQueue: work === undefined ? "unknown" : work.mergeQueue,
      conflictQueue,
      // Quiet worktrees with unmerged work, then closed PRs whose commits
      // never landed (from the sync).
      staleSalvageQueue:
        salvage === undefined && synced === undefined
          ? "unknown"
          : [...(salvage ?? []), ...(synced?.facts.staleSalvage ?? [])],
    },
    sessionControls: decideControls(controlFacts(ctx, git, github?.state)),
    sync: {
      // From the last Linear sync that worked; health stays "unknown" until
      // one did, and capacity is never known (DR-0040).
      Linear: linear
        ? {
            project: linear.project,
            health: linear.health ?? "unknown",
            issueCapacityBlocked: linear.issueCapacityBlocked,
            latestStatusUpdateId: linear.latestStatusUpdateId,
            syncedAt: linearSync!.factsAt,
          }
        : {
            project: config.sync?.linear?.project ?? config.linear?.project ?? "unknown",
            health: "unknown",
            issueCapacityBlocked: null,
            latestStatusUpdateId: null,
          },
      GitHub: {
        repo: gitOk?.repoSlug ?? synced?.facts.repo ?? null,
        latestPullRequest: gh?.latestPullRequest ?? branchPr ?? null,
      },
      handoff: handoff ?? { path: null, written: null },
    },
  };
  return {
    payload,
    context: ctx,
    git,
    github,
    work,
    localCheckNames: local?.map((c) => c.name) ?? [],
    reading,
    gateway,
  };
}

/** The dmux project at or above `dir` (the repository's main checkout, where
 * dmux keeps it); undefined when there is none or its config cannot be read
 * — the HUD then lists no panes rather than failing. */
async function dmuxAround(dir: string): Promise<DmuxProject | undefined> {
  const root = await findDmuxRoot(dir);
  if (root === undefined) return undefined;
  return readDmuxProject(root).catch(() => undefined);
}

/** File reservations (DR-0041) around the target: those it holds, and other
 * holders' that reach into its worktree; undefined when the store has none
 * to read. */
function reservationsAround(
  entries: { key: string; value?: unknown }[] | undefined,
  sid: string | null,
  worktree: string | undefined,
  now: number,
): { held: KeyedReservation[]; others: KeyedReservation[] } | undefined {
  if (entries === undefined) return undefined;
  const live = liveReservations(entries, now);
  const held = sid === null ? [] : live.filter((r) => isOwn(r, sid));
  const others =
    worktree === undefined
      ? []
      : live.filter(
          (r) => (sid === null || !isOwn(r, sid)) && globsOverlap(r.glob, `${worktree}/**`),
        );
  return { held, others };
}

function hudReservation(r: KeyedReservation) {
  return {
    glob: r.glob,
    holder: r.holder.sid,
    holderName: r.holder.name ?? null,
    exclusive: r.exclusive,
    reason: r.reason ?? null,
    expiresAt: new Date(r.expires_at).toISOString(),
  };
}

/** The last GitHub sync's facts when they describe `repo` (any repository's
 * when the worktree has none). */
function githubSyncFacts(
  run: SyncRun | undefined,
  repo: string | null,
): { facts: GithubSyncFacts; at: string } | undefined {
  const facts = run?.facts as GithubSyncFacts | null | undefined;
  if (facts == null || run?.factsAt == null) return undefined;
  if (repo !== null && facts.repo.toLowerCase() !== repo.toLowerCase()) return undefined;
  return { facts, at: run.factsAt };
}

/** The HUD's todo section from a list (the transcript's, without a file). */
function todoSummary(list: { status: string; activeForm?: string; content: string }[]) {
  const counts = { pending: 0, inProgress: 0, completed: 0 };
  let inProgress: string | null = null;
  for (const t of list) {
    if (t.status === "pending") counts.pending++;
    else if (t.status === "completed") counts.completed++;
    else if (t.status === "in_progress") {
      counts.inProgress++;
      inProgress ??= t.activeForm ?? t.content;
    }
  }
  return { inProgress, counts };
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** The conflict queue: worktrees of the repository holding merge conflicts,
 * then the board's PRs GitHub reports as DIRTY; unknown when neither source
 * can be read. */
export function conflictQueueOf(
  worktrees: ConflictedWorktree[] | undefined,
  work: WorkSignals | undefined,
): (ConflictedWorktree | ConflictedItem)[] | "unknown" {
  if (worktrees === undefined && work === undefined) return "unknown";
  return [...(worktrees ?? []), ...(work?.conflicted ?? [])];
}

/** Context pressure from the share of the window left. */
export function pressure(remainingPct: number): string {
  if (remainingPct >= 50) return "normal";
  if (remainingPct >= 25) return "elevated";
  if (remainingPct >= 10) return "high";
  return "critical";
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** The latest result of each check for the repository, configured checks
 * first in their order; a configured check never run shows as "unknown". */
function localChecks(
  runs: CheckRun[] | undefined,
  ctx: SessionContext,
): { name: string; command: string; status: string }[] {
  const byName = new Map((runs ?? []).map((r) => [r.name, r]));
  const out: { name: string; command: string; status: string }[] = [];
  for (const c of ctx.config.checks ?? []) {
    const r = byName.get(c.name);
    byName.delete(c.name);
    out.push(
      r === undefined
        ? { name: c.name, command: c.command, status: "unknown" }
        : { name: c.name, command: r.command, status: r.status },
    );
  }
  for (const r of byName.values()) out.push({ name: r.name, command: r.command, status: r.status });
  return out;
}
