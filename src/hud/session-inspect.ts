import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { type EccSession, SESSION_SCHEMA, type SessionWorker } from "../contract/ecc/session.js";
import { ContractError } from "../contract/errors.js";
import type { MirroredSession } from "../store/ecc-sessions.js";
import {
  DMUX_SESSION_NAME,
  dmuxLiveness,
  dmuxProjectState,
  dmuxRootOfSession,
  dmuxWorker,
  findDmuxRoot,
  readDmuxProject,
} from "./dmux.js";
import { readSession } from "./session-reading.js";
import { sessionWorkers } from "./workers.js";

// `ccmsg session-inspect <target>` (ecc-surfaces §2.4): one session as
// `ecc.session.v1`. Three adapters: `claude-history` reads the session files
// ECC's hooks leave in `<claude config dir>/session-data/`, `ccmsg` reads a
// session's transcript and its agent tree (sub-agents and teammates become
// its workers), and `dmux` reads a dmux project's config (its panes become
// the workers).

const NO_HISTORY = "No Claude session history found";

export const ADAPTERS = [
  {
    id: "claude-history",
    description:
      "ECC's session files: <claude config dir>/session-data/YYYY-MM-DD-<id>-session.tmp",
    targets: ["claude:latest", "claude:<id|alias>", "<file>.tmp"],
  },
  {
    id: "ccmsg",
    description: "a session's transcript and agent tree (sub-agents and teammates are its workers)",
    targets: ["<sid>", "ccmsg:<sid>", "claude:<sid> (when it has no session file)"],
  },
  {
    id: "dmux",
    description:
      "a dmux project's <project root>/.dmux/dmux.config.json (its panes are the workers)",
    targets: [
      "dmux:<dir>",
      "dmux:<dir>#<pane id|slug|tmux pane>",
      "dmux: (this directory)",
      "<dmux session name> (dmux-<project>-<hash>)",
    ],
  },
] as const;

export type AdapterId = (typeof ADAPTERS)[number]["id"];

export interface InspectPlaces {
  claudeHome: string;
  codexHome: string;
  cacheDir?: string;
  /** The mirrored session of a sid, when the store has it. */
  mirrored(sid: string): MirroredSession | undefined;
  /** What a relative `dmux:` target is relative to (default: the process's). */
  cwd?: string;
}

/** A session file's name: `YYYY-MM-DD-<id>-session.tmp`. */
const SESSION_FILE = /^(\d{4}-\d{2}-\d{2})-(.+)-session\.tmp$/;

/** Inspect a target; throws `not_found` (NO_HISTORY for Claude targets) when
 * there is nothing to read, `invalid_args` for a target the adapter cannot
 * take. */
export async function inspectTarget(
  target: string,
  places: InspectPlaces,
  adapter?: AdapterId,
): Promise<EccSession> {
  if (adapter !== undefined && !ADAPTERS.some((a) => a.id === adapter))
    throw new ContractError(
      "invalid_args",
      `no adapter "${adapter}" (have: ${ADAPTERS.map((a) => a.id).join(", ")})`,
    );
  if (target.startsWith("dmux:") || DMUX_SESSION_NAME.test(target)) {
    refuseAdapter(adapter, "dmux", target);
    return dmuxSession(target, places.cwd ?? process.cwd());
  }
  if (target.endsWith(".tmp")) {
    refuseAdapter(adapter, "claude-history", target);
    return historySession(resolve(target), { type: "session-file", value: target });
  }
  if (target.startsWith("claude:")) {
    const id = target.slice("claude:".length);
    const file = await findSessionFile(places.claudeHome, id);
    if (file !== undefined && adapter !== "ccmsg")
      return historySession(file, {
        type: id === "latest" ? "claude-latest" : "claude-session",
        value: target,
      });
    if (adapter !== "claude-history" && id !== "latest" && id !== "") {
      const found = await ccmsgSession(id, target, places);
      if (found !== undefined) return found;
    }
    throw new ContractError("not_found", NO_HISTORY);
  }
  refuseAdapter(adapter, "ccmsg", target);
  const sid = target.startsWith("ccmsg:") ? target.slice("ccmsg:".length) : target;
  const found = await ccmsgSession(sid, target, places);
  if (found === undefined)
    throw new ContractError(
      "not_found",
      `no session ${sid} found: no transcript of it under ${places.claudeHome} or ${places.codexHome}, and the instance never saw it`,
    );
  return found;
}

function refuseAdapter(asked: AdapterId | undefined, fits: AdapterId, target: string): void {
  if (asked !== undefined && asked !== fits)
    throw new ContractError("invalid_args", `adapter ${asked} cannot read ${target} (${fits} can)`);
}

/** The session file for `claude:<id>`: `latest` is the newest; otherwise the
 * file whose id is `id` or starts with it (a short alias). */
async function findSessionFile(claudeHome: string, id: string): Promise<string | undefined> {
  const dir = join(claudeHome, "session-data");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const files = await Promise.all(
    names
      .map((n) => ({ n, m: SESSION_FILE.exec(n) }))
      .filter((f) => f.m !== null && (id === "latest" || f.m[2] === id || f.m[2]!.startsWith(id)))
      .map(async (f) => {
        const path = join(dir, f.n);
        const mtime = await stat(path).then(
          (s) => s.mtimeMs,
          () => 0,
        );
        return { path, date: f.m![1]!, exact: f.m![2] === id, mtime };
      }),
  );
  files.sort(
    (a, b) =>
      Number(b.exact) - Number(a.exact) || b.date.localeCompare(a.date) || b.mtime - a.mtime,
  );
  return files[0]?.path;
}

/** What ECC's session file says: `**Branch:**`, `**Worktree:**`, and the
 * lists under `### In Progress`, `### Completed`, `### Notes for Next Session`. */
function parseHistoryFile(text: string): {
  title: string | null;
  branch: string | null;
  worktree: string | null;
  inProgress: string[];
  completed: string[];
  notes: string[];
} {
  const field = (name: string) =>
    new RegExp(`^\\*\\*${name}:\\*\\*\\s*(.+?)\\s*$`, "mi")
      .exec(text)?.[1]
      ?.replace(/^`|`$/g, "") ?? null;
  const lists = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    const heading = /^#{2,4}\s+(.+?)\s*$/.exec(line);
    if (heading !== null) {
      current = [];
      lists.set(heading[1]!.toLowerCase(), current);
      continue;
    }
    const item = /^\s*[-*]\s+(?:\[[ xX]\]\s+)?(.+?)\s*$/.exec(line);
    if (item !== null && current !== undefined) current.push(item[1]!);
  }
  const list = (name: string) => lists.get(name) ?? [];
  return {
    title: /^#\s+(.+?)\s*$/m.exec(text)?.[1] ?? null,
    branch: field("Branch"),
    worktree: field("Worktree"),
    inProgress: list("in progress"),
    completed: list("completed"),
    notes: list("notes for next session"),
  };
}

async function historySession(
  path: string,
  sourceTarget: { type: string; value: string },
): Promise<EccSession> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new ContractError("not_found", NO_HISTORY);
  }
  const f = parseHistoryFile(text);
  const id = SESSION_FILE.exec(basename(path))?.[2] ?? basename(path, ".tmp");
  const state =
    f.inProgress.length > 0 ? "in_progress" : f.completed.length > 0 ? "completed" : "unknown";
  const worker: SessionWorker = {
    id,
    label: f.title,
    state,
    health: "unknown",
    branch: f.branch,
    worktree: f.worktree,
    runtime: { kind: "claude-session", command: null, pid: null, active: null, dead: null },
    intent: { objective: f.inProgress[0] ?? null, seedPaths: [] },
    outputs: { summary: f.completed, validation: [], remainingRisks: f.notes },
    artifacts: { sessionFile: path },
  };
  return document(
    "claude-history",
    {
      id,
      kind: "history",
      state,
      repoRoot: f.worktree,
      sourceTarget,
    },
    [worker],
  );
}

async function ccmsgSession(
  sid: string,
  value: string,
  places: InspectPlaces,
): Promise<EccSession | undefined> {
  const mirrored = places.mirrored(sid);
  // A Claude Code transcript first (what an announced path names), else a
  // Codex rollout of that thread.
  const reading =
    (await readSession("claude", sid, {
      home: places.claudeHome,
      announced: mirrored?.transcript_path,
      cacheDir: places.cacheDir,
    })) ?? (await readSession("codex", sid, { home: places.codexHome, cacheDir: places.cacheDir }));
  if (reading === undefined && mirrored === undefined) return undefined;
  const fold = reading?.fold;
  const place = {
    branch: mirrored?.branch ?? fold?.gitBranch ?? null,
    worktree: mirrored?.cwd ?? fold?.cwd ?? null,
  };
  const workers = reading === undefined ? [] : sessionWorkers(reading, place);
  return document(
    "ccmsg",
    {
      id: sid,
      kind: "orchestrated",
      state: fold?.apiError ? "error" : (mirrored?.state ?? "unknown"),
      repoRoot: mirrored?.repo_root ?? null,
      sourceTarget: { type: "ccmsg-session", value },
    },
    workers,
  );
}

/** `dmux:<dir>[#<pane>]`: the project at or above `dir` (a pane's worktree
 * finds its project), all its panes or the one named by id, slug or tmux
 * pane id. `<dir>` may instead be the name dmux gave the project's tmux
 * session (`dmux-<name>-<hash>`, also taken without `dmux:`), when no such
 * directory exists. */
async function dmuxSession(target: string, cwd: string): Promise<EccSession> {
  const spec = target.startsWith("dmux:") ? target.slice("dmux:".length) : target;
  const hash = spec.lastIndexOf("#");
  const place = (hash < 0 ? spec : spec.slice(0, hash)) || ".";
  const dir = resolve(cwd, place);
  const paneName = hash < 0 ? undefined : spec.slice(hash + 1);
  const asDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const root =
    !asDir && DMUX_SESSION_NAME.test(place)
      ? await dmuxRootOfSession(place, cwd)
      : await findDmuxRoot(dir);
  if (root === undefined)
    throw new ContractError(
      "not_found",
      !asDir && DMUX_SESSION_NAME.test(place)
        ? `no dmux session ${place}: not the project around ${cwd}, and tmux knows no such session`
        : `no dmux project at ${dir}: no .dmux/dmux.config.json there or above (run dmux in the repository first)`,
    );
  const project = await readDmuxProject(root);
  const live = await dmuxLiveness(project);
  let panes = project.panes;
  if (paneName !== undefined) {
    panes = panes.filter((p) => p.id === paneName || p.slug === paneName || p.paneId === paneName);
    if (panes.length === 0)
      throw new ContractError(
        "not_found",
        `no pane "${paneName}" in the dmux project at ${root} (panes: ${project.panes.map((p) => p.slug).join(", ") || "none"})`,
      );
  }
  return document(
    "dmux",
    {
      id: project.sessionName,
      kind: "orchestrated",
      state: dmuxProjectState(panes),
      repoRoot: project.root,
      sourceTarget: { type: paneName === undefined ? "dmux-project" : "dmux-pane", value: target },
    },
    panes.map((p) => dmuxWorker(project, p, live)),
  );
}

function document(
  adapterId: AdapterId,
  session: EccSession["session"],
  workers: SessionWorker[],
): EccSession {
  const states: Record<string, number> = {};
  const healths: Record<string, number> = {};
  for (const w of workers) {
    states[w.state] = (states[w.state] ?? 0) + 1;
    healths[w.health] = (healths[w.health] ?? 0) + 1;
  }
  return {
    schemaVersion: SESSION_SCHEMA,
    adapterId,
    session,
    workers,
    aggregates: { workerCount: workers.length, states, healths },
  };
}
