import { type Dirent, mkdirSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import {
  LOOP_STATUS_INDEX_SCHEMA,
  LOOP_STATUS_SCHEMA,
  LOOP_STATUS_SESSION_SCHEMA,
  type LoopError,
  type LoopSession,
  type LoopStatus,
  type LoopStatusIndex,
  type LoopStatusSessionFile,
} from "../contract/ecc/loop-status.js";
import { foldFile } from "../harness/fold-cache.js";
import {
  ageSeconds,
  loopSignals,
  pendingCalls,
  recommendedAction,
  wakeDueAt,
} from "../harness/loop-signals.js";
import { writeFileAtomic } from "../state/atomic-write.js";

// `ccmsg loop-status` (ecc-surfaces §2.3): for the newest transcripts under a
// Claude Code config home's `projects/` (or the ones named), what each
// long-running loop is waiting on and whether it needs someone: a Bash call
// with no result past a threshold, a scheduled wake-up that did not happen,
// lines that do not parse. Each transcript is folded from the fold cache.

export interface LoopOptions {
  /** `--home`: the user home whose `.claude/projects` is scanned. */
  homeDir: string | null;
  /** The tree scanned when no transcript is named. */
  transcriptRoot: string | null;
  /** `--transcript`, in the order given (no scan then). */
  transcripts: string[];
  limit: number;
  bashTimeoutSeconds: number;
  wakeGraceMultiplier: number;
  /** Unix ms. */
  now: number;
  cacheDir?: string;
}

/** How deep below the root transcripts are looked for. */
const MAX_DEPTH = 4;
/** Files looked at while scanning, at most. */
const MAX_SCANNED = 20_000;

/** `.jsonl` files under `root` (sub-agents' own transcripts left out: they
 * are part of their session, not loops of their own), newest first. */
async function newestTranscripts(root: string, limit: number): Promise<string[]> {
  const found: { path: string; mtime: number }[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || found.length >= MAX_SCANNED) return;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "subagents") await walk(path, depth + 1);
      } else if (e.isFile() && e.name.endsWith(".jsonl")) {
        try {
          found.push({ path, mtime: (await stat(path)).mtimeMs });
        } catch {}
      }
    }
  };
  await walk(root, 0);
  found.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
  return found.slice(0, limit).map((f) => f.path);
}

/** Codex names its rollouts `rollout-…`; everything else is Claude Code's. */
function harnessOfFile(path: string): "claude" | "codex" {
  return basename(path).startsWith("rollout-") ? "codex" : "claude";
}

async function loopSession(path: string, o: LoopOptions): Promise<LoopSession> {
  const harness = harnessOfFile(path);
  const { fold } = await foldFile(path, harness, o.cacheDir);
  const signals = loopSignals(fold, o);
  const wake = fold.wake;
  return {
    eventCount: fold.events,
    lastEventAt: fold.lastEventAt,
    latestWake:
      wake === null
        ? null
        : {
            delaySeconds: wake.delaySeconds,
            dueAt: wakeDueAt(wake),
            reason: wake.reason,
            scheduledAt: wake.scheduledAt,
            toolUseId: wake.toolUseId,
          },
    parseErrors: fold.parseErrors,
    pendingTools: pendingCalls(fold).map((c) => ({
      command: c.command,
      input: c.input,
      name: c.name,
      startedAt: c.startedAt,
      toolUseId: c.toolUseId,
      ageSeconds: ageSeconds(c.startedAt, o.now),
    })),
    projectSlug: harness === "claude" ? basename(dirname(path)) : null,
    recommendedAction: recommendedAction(signals),
    sessionId:
      harness === "claude"
        ? basename(path, ".jsonl")
        : (fold.sessionId ?? basename(path, ".jsonl")),
    signals,
    state: signals.length > 0 ? "attention" : "ok",
    transcriptPath: path,
  };
}

export async function loopStatus(o: LoopOptions): Promise<LoopStatus> {
  const paths =
    o.transcripts.length > 0
      ? o.transcripts.map((t) => resolve(t))
      : o.transcriptRoot === null
        ? []
        : await newestTranscripts(o.transcriptRoot, o.limit);
  const errors: LoopError[] = [];
  const sessions: LoopSession[] = [];
  for (const path of paths) {
    try {
      sessions.push(await loopSession(path, o));
    } catch (error) {
      errors.push({ transcriptPath: path, message: (error as Error).message });
    }
  }
  // Attention first, then the newest.
  sessions.sort(
    (a, b) =>
      Number(b.state === "attention") - Number(a.state === "attention") ||
      (b.lastEventAt ?? "").localeCompare(a.lastEventAt ?? ""),
  );
  return {
    schemaVersion: LOOP_STATUS_SCHEMA,
    generatedAt: new Date(o.now).toISOString(),
    errors,
    sessions,
    source: {
      bashTimeoutSeconds: o.bashTimeoutSeconds,
      homeDir: o.homeDir,
      limit: o.limit,
      transcriptCount: paths.length,
      transcriptRoot: o.transcripts.length > 0 ? null : o.transcriptRoot,
      wakeGraceMultiplier: o.wakeGraceMultiplier,
    },
  };
}

/** A session id as a file name: anything outside `[A-Za-z0-9._-]` becomes
 * `_`, and a name of dots alone is refused the same way. */
function sanitisedId(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 200);
  return /^\.*$/.test(safe) ? `_${safe}` : safe;
}

/** `--write-dir`: one `<sanitised id>.json` per session and `index.json`,
 * each written whole (temp file + rename). Returns the index. */
export function writeLoopStatus(dir: string, status: LoopStatus): LoopStatusIndex {
  mkdirSync(dir, { recursive: true });
  const root = resolve(dir);
  const entries: LoopStatusIndex["sessions"] = [];
  for (const session of status.sessions) {
    const snapshotPath = join(root, `${sanitisedId(session.sessionId)}.json`);
    const file: LoopStatusSessionFile = {
      schemaVersion: LOOP_STATUS_SESSION_SCHEMA,
      generatedAt: status.generatedAt,
      session,
    };
    writeFileAtomic(snapshotPath, `${JSON.stringify(file, null, 2)}\n`);
    entries.push({
      lastEventAt: session.lastEventAt,
      sessionId: session.sessionId,
      signalTypes: session.signals.map((s) => s.type),
      snapshotPath,
      state: session.state,
      transcriptPath: session.transcriptPath,
    });
  }
  const index: LoopStatusIndex = {
    schemaVersion: LOOP_STATUS_INDEX_SCHEMA,
    errors: status.errors,
    generatedAt: status.generatedAt,
    sessionCount: status.sessions.length,
    sessions: entries,
    source: status.source,
  };
  writeFileAtomic(join(root, "index.json"), `${JSON.stringify(index, null, 2)}\n`);
  return index;
}

/** The readable form: one line per session, its signals below it. */
export function loopStatusText(status: LoopStatus): string {
  const lines: string[] = [];
  const { source } = status;
  lines.push(
    `${status.sessions.length} session${status.sessions.length === 1 ? "" : "s"} from ${source.transcriptRoot ?? "the named transcripts"} (Bash timeout ${source.bashTimeoutSeconds}s, wake grace ×${source.wakeGraceMultiplier})`,
  );
  for (const s of status.sessions) {
    const pending = s.pendingTools.length;
    lines.push(
      `${s.state === "attention" ? "!" : " "} ${s.sessionId}  ${s.state}  last event ${s.lastEventAt ?? "unknown"}  ${s.eventCount} events, ${pending} pending`,
    );
    for (const signal of s.signals) lines.push(`    ${signal.type}: ${signal.message}`);
    if (s.recommendedAction !== null) lines.push(`    → ${s.recommendedAction}`);
  }
  for (const e of status.errors) lines.push(`error: ${e.transcriptPath ?? ""}: ${e.message}`);
  return lines.join("\n");
}
