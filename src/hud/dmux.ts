import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { SessionWorker } from "../contract/ecc/session.js";
import { ContractError } from "../contract/errors.js";
import { run } from "../probes/exec.js";
import { nodeCrypto } from "../util/lazy-builtins.js";

// dmux (github.com/standardagents/dmux) runs one agent per tmux pane, each in
// its own git worktree, and keeps what it knows of a project in
// `<project root>/.dmux/dmux.config.json` (its `DmuxConfig`: projectName,
// projectRoot, panes[], settings, lastUpdated, controlPaneId …; early
// versions wrote the panes array alone). Each pane (`DmuxPane`) has id, slug,
// prompt, paneId and optionally displayName, branchName, worktreePath, agent,
// agentStatus (idle | analyzing | waiting | working), agentSummary,
// testStatus, potentialHarm. This module reads that file — nothing of tmux —
// for `session-inspect dmux:<dir>` and the HUD's `activeAgents` (DR-0066).

/** Where dmux keeps a project's state, under its root. */
export const DMUX_CONFIG = join(".dmux", "dmux.config.json");
/** The largest config read; dmux's own is a few kilobytes per pane. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** Directories walked up from the one named before giving up. */
const MAX_DEPTH = 64;

export interface DmuxPane {
  id: string;
  slug: string;
  prompt: string;
  paneId: string | null;
  displayName: string | null;
  branchName: string | null;
  worktreePath: string | null;
  type: string | null;
  agent: string | null;
  shellType: string | null;
  agentStatus: string | null;
  agentSummary: string | null;
  needsAttention: boolean | null;
  hidden: boolean | null;
  testStatus: string | null;
  devUrl: string | null;
  riskDescription: string | null;
  analyzerError: string | null;
}

export interface DmuxProject {
  /** The directory holding `.dmux/`. */
  root: string;
  configPath: string;
  /** dmux's name for the project (the root's basename when it gave none). */
  projectName: string;
  /** The tmux session dmux runs the project in. */
  sessionName: string;
  lastUpdated: string | null;
  panes: DmuxPane[];
}

/** dmux's tmux session name for a project root: `dmux-<basename>-<first 8
 * hex of md5(root)>`, anything outside [A-Za-z0-9_-] made `-` (as dmux's
 * `buildSessionNameForRoot`). */
export function dmuxSessionName(root: string): string {
  const hash = nodeCrypto().createHash("md5").update(root).digest("hex").slice(0, 8);
  return `dmux-${`${basename(root)}-${hash}`.replace(/[^a-zA-Z0-9_-]+/g, "-")}`;
}

/** A name dmux gives a tmux session (dmuxSessionName). */
export const DMUX_SESSION_NAME = /^dmux-[A-Za-z0-9_-]+-[0-9a-f]{8}$/;

/** The project root of a dmux tmux session: the project around `cwd` when
 * its session name is `name`, else what the running session published
 * (dmux sets the tmux option `@dmux_project_root` on it); undefined when
 * neither knows it. */
export async function dmuxRootOfSession(
  name: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const near = await findDmuxRoot(cwd);
  if (near !== undefined) {
    const project = await readDmuxProject(near).catch(() => undefined);
    if (project?.sessionName === name) return near;
  }
  // `=name:` — exactly this session (tmux matches a bare name as a prefix).
  const r = await run("tmux", ["show-options", "-v", "-t", `=${name}:`, "@dmux_project_root"], {
    env,
  });
  const root = r.ok ? r.stdout.trim() : "";
  return root === "" ? undefined : root;
}

/** The nearest directory at or above `dir` holding a dmux config (a pane's
 * worktree, `<root>/.dmux/worktrees/<slug>`, finds its project); undefined
 * when there is none. */
export async function findDmuxRoot(dir: string): Promise<string | undefined> {
  let at = resolve(dir);
  for (let i = 0; i < MAX_DEPTH; i++) {
    const found = await stat(join(at, DMUX_CONFIG)).then(
      (s) => s.isFile(),
      () => false,
    );
    if (found) return at;
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
  return undefined;
}

/** Read the project whose root is `root`. Throws `not_found` when it has no
 * config, `invalid_args` when the config is not dmux's shape. */
export async function readDmuxProject(root: string): Promise<DmuxProject> {
  const configPath = join(root, DMUX_CONFIG);
  let text: string;
  try {
    const buf = await readFile(configPath);
    if (buf.length > MAX_CONFIG_BYTES)
      throw new ContractError(
        "invalid_args",
        `${configPath} is larger than ${MAX_CONFIG_BYTES} bytes: not a dmux config`,
      );
    text = buf.toString("utf8");
  } catch (e) {
    if (e instanceof ContractError) throw e;
    throw new ContractError(
      "not_found",
      `no dmux project at ${root}: cannot read ${configPath} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ContractError("invalid_args", `${configPath} is not JSON: ${(e as Error).message}`);
  }
  const bad = (why: string) =>
    new ContractError("invalid_args", `${configPath} is not a dmux config: ${why}`);
  // dmux reads `Array.isArray(config) ? config : config.panes`.
  const doc = Array.isArray(value) ? { panes: value } : value;
  if (!isRecord(doc)) throw bad("neither an object nor an array of panes");
  const rawPanes = doc.panes ?? [];
  if (!Array.isArray(rawPanes)) throw bad("`panes` is not an array");
  const panes = rawPanes.map((p, i) => {
    const pane = readPane(p);
    if (typeof pane === "string") throw bad(`panes[${i}]: ${pane}`);
    return pane;
  });
  return {
    root,
    configPath,
    projectName: text1(doc.projectName) ?? basename(root),
    sessionName: dmuxSessionName(text1(doc.projectRoot) ?? root),
    lastUpdated: text1(doc.lastUpdated),
    panes,
  };
}

/** One pane, or why it is not one: dmux always writes id and slug. */
function readPane(p: unknown): DmuxPane | string {
  if (!isRecord(p)) return "not an object";
  const id = text1(p.id);
  const slug = text1(p.slug);
  if (id === null) return "no id";
  if (slug === null) return "no slug";
  const harm = isRecord(p.potentialHarm) ? p.potentialHarm : undefined;
  return {
    id,
    slug,
    prompt: typeof p.prompt === "string" ? p.prompt : "",
    paneId: text1(p.paneId),
    displayName: text1(p.displayName),
    branchName: text1(p.branchName),
    worktreePath: text1(p.worktreePath),
    type: text1(p.type),
    agent: text1(p.agent),
    shellType: text1(p.shellType),
    agentStatus: text1(p.agentStatus),
    agentSummary: text1(p.agentSummary),
    needsAttention: typeof p.needsAttention === "boolean" ? p.needsAttention : null,
    hidden: typeof p.hidden === "boolean" ? p.hidden : null,
    testStatus: text1(p.testStatus),
    devUrl: text1(p.devUrl),
    riskDescription: harm?.hasRisk === true ? (text1(harm.description) ?? "potential harm") : null,
    analyzerError: text1(p.analyzerError),
  };
}

/** What tmux says of one pane of the project's session. */
export interface PaneLiveness {
  pid: number | null;
  dead: boolean;
}

/** The panes of the project's running tmux session, by tmux pane id;
 * undefined when tmux has no such session (or no tmux) — liveness unknown. */
export async function dmuxLiveness(
  project: DmuxProject,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Map<string, PaneLiveness> | undefined> {
  const r = await run(
    "tmux",
    [
      "list-panes",
      "-s",
      "-t",
      `=${project.sessionName}`,
      "-F",
      "#{pane_id} #{pane_pid} #{pane_dead}",
    ],
    { env },
  );
  if (!r.ok) return undefined;
  const live = new Map<string, PaneLiveness>();
  for (const line of r.stdout.split("\n")) {
    // Spaces, not tabs: tmux prints a tab in a format as "_".
    const [id, pid, dead] = line.trim().split(" ");
    if (!id) continue;
    const n = Number(pid);
    live.set(id, { pid: Number.isInteger(n) && n > 0 ? n : null, dead: dead === "1" });
  }
  return live;
}

/** A pane as an `ecc.session.v1` worker. dmux's own status word is the
 * state; pid and liveness come from tmux when its session runs (`live`),
 * else stay null. A pane dmux lists but the running session lacks is
 * inactive. */
export function dmuxWorker(
  project: DmuxProject,
  p: DmuxPane,
  live?: Map<string, PaneLiveness>,
): SessionWorker {
  const pane = live === undefined || p.paneId === null ? undefined : live.get(p.paneId);
  const shell = p.type === "shell";
  const state = p.agentStatus ?? "unknown";
  const artifacts: Record<string, unknown> = {
    slug: p.slug,
    configPath: project.configPath,
    projectRoot: project.root,
    tmuxSession: project.sessionName,
  };
  if (p.paneId !== null) artifacts.tmuxPaneId = p.paneId;
  if (p.agent !== null) artifacts.agent = p.agent;
  if (p.devUrl !== null) artifacts.devUrl = p.devUrl;
  if (p.hidden !== null) artifacts.hidden = p.hidden;
  if (p.needsAttention !== null) artifacts.needsAttention = p.needsAttention;
  return {
    id: p.id,
    label: p.displayName ?? p.slug,
    state,
    health: p.analyzerError !== null ? "degraded" : state === "unknown" ? "unknown" : "healthy",
    // A worktree pane's branch is its slug unless dmux prefixed it; a shell
    // pane has neither branch nor worktree of its own.
    branch: p.branchName ?? (shell || p.worktreePath === null ? null : p.slug),
    worktree: p.worktreePath,
    runtime: {
      kind: shell ? "dmux-shell" : "dmux-pane",
      command: p.agent ?? p.shellType,
      pid: pane?.pid ?? null,
      active: live === undefined || p.paneId === null ? null : pane !== undefined && !pane.dead,
      dead: pane?.dead ?? null,
    },
    intent: { objective: p.prompt.trim() === "" ? null : p.prompt, seedPaths: [] },
    outputs: {
      summary: p.agentSummary === null ? [] : [p.agentSummary],
      validation: p.testStatus === null ? [] : [`tests ${p.testStatus}`],
      remainingRisks: [p.riskDescription, p.analyzerError].filter((r): r is string => r !== null),
    },
    artifacts,
  };
}

/** The project's state from its panes: working while any pane works, else
 * waiting while any waits for a person, else idle; unknown with no pane
 * status at all. */
export function dmuxProjectState(panes: DmuxPane[]): string {
  const states = new Set(panes.map((p) => p.agentStatus));
  if (states.has("working") || states.has("analyzing")) return "working";
  if (states.has("waiting")) return "waiting";
  if (states.has("idle")) return "idle";
  return panes.length === 0 ? "empty" : "unknown";
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function text1(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}
