import { type CcmsgConfig, loadConfig } from "../config/config.js";
import { ContractError } from "../contract/errors.js";
import { codexThread } from "../harness/resume.js";
import { findHarnessProcess } from "../harness/session-process.js";
import { onPath } from "../probes/exec.js";
import { type GitProbe, probeGit } from "../probes/git.js";
import type { GhState } from "../probes/github.js";
import {
  claimingHarness,
  codexConfigHome,
  configFile,
  configHome,
  resolveStateDir,
  stateFiles,
} from "../state/paths.js";
import type { ControlFacts } from "./controls.js";
import { openStoreReader, type StoreReader } from "./store-reader.js";
import { isKnownSession, resolveTarget, type Target } from "./target.js";

// Everything the HUD and the session controls start from: the config, the
// store (read-only), and the target session with its directory.

export interface Places {
  stateDir: string;
  configPath: string;
  /** `--sid`, when given. */
  flagSid?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SessionContext {
  stateDir: string;
  configPath: string;
  config: CcmsgConfig;
  reader: StoreReader | undefined;
  target: Target;
  env: NodeJS.ProcessEnv;
  /** The target's running harness process, found as the instance finds it to
   * signal it (same config home, same proof); undefined without a target. */
  process: HarnessProcessFact | undefined;
}

/** A harness process's pid, or why there is none to act on. */
export type HarnessProcessFact = { pid: number } | { none: string };

export async function openSessionContext(p: Places): Promise<SessionContext> {
  const env = p.env ?? process.env;
  const config = loadConfig(p.configPath);
  const files = stateFiles(p.stateDir);
  const reader = await openStoreReader(files.database, config.store);
  const target = await codexTarget(
    resolveTarget(p.flagSid, reader?.sessions, files.statusline, env, p.cwd),
    env,
  );
  const proc = target.sid === null ? undefined : await harnessProcessFact(target.sid, env);
  return {
    stateDir: p.stateDir,
    configPath: p.configPath,
    config,
    reader,
    target,
    env,
    process: proc,
  };
}

/** A target nothing names a harness for is Codex's when Codex has its
 * thread (a rollout), which also says its directory when nothing else did. */
async function codexTarget(target: Target, env: NodeJS.ProcessEnv): Promise<Target> {
  if (target.sid === null || target.harness !== "unknown") return target;
  const thread = await codexThread(codexConfigHome(env), target.sid);
  if (thread === undefined) return target;
  if (target.cwdKnown || thread.cwd === undefined) return { ...target, harness: "codex" };
  return { ...target, harness: "codex", cwd: thread.cwd, cwdKnown: true };
}

/** Where the instance of this environment (one per config home) looks for a
 * session's process, looked at the same way. */
async function harnessProcessFact(
  sid: string,
  env: NodeJS.ProcessEnv,
): Promise<HarnessProcessFact> {
  const found = await findHarnessProcess(claimingHarness(env), configHome(env), sid);
  return found.found ? { pid: found.process.pid } : { none: found.why };
}

/** What a session command was given: `--state-dir` and `--sid`. */
export interface SessionFlags {
  "state-dir"?: string;
  sid?: string;
}

/** Run a session command (`ccmsg session …`, `ccmsg queue …`): the context
 * from its flags and the default config, git probed at the target's directory;
 * the store reader is closed when `use` settles. */
export async function withSessionContext<T>(
  flags: SessionFlags,
  use: (ctx: SessionContext, git: GitProbe) => Promise<T>,
): Promise<T> {
  const ctx = await openSessionContext({
    stateDir: resolveStateDir(flags["state-dir"]),
    configPath: configFile(undefined),
    flagSid: flags.sid,
  });
  try {
    requireKnownSession(ctx, flags.sid);
    return await use(ctx, await probeGit(ctx.target.cwd));
  } finally {
    ctx.reader?.close();
  }
}

/** Refuse a `--sid` nothing here knows, rather than describe a session that
 * may not exist (a mistyped id would otherwise read as "no data"). */
export function requireKnownSession(ctx: SessionContext, flagSid: string | undefined): void {
  if (flagSid === undefined || flagSid === "" || isKnownSession(ctx.target)) return;
  // A session whose harness runs here is known, greeted or not; so is a
  // Codex thread Codex keeps a rollout of (the only way it is Codex's here).
  if (ctx.process !== undefined && "pid" in ctx.process) return;
  if (ctx.target.harness === "codex") return;
  throw new ContractError(
    "session_not_found",
    `no session ${flagSid} is known here: it never greeted the instance of ${ctx.stateDir}, no statusline of it was recorded and no harness process of it runs (ccmsg peers lists the sessions)`,
  );
}

/** The facts `controls.ts` decides on, for this context. */
export function controlFacts(ctx: SessionContext, git: GitProbe, gh?: GhState): ControlFacts {
  return {
    target: ctx.target.sid,
    caller: ctx.target.caller,
    harness: ctx.target.harness,
    cwd: ctx.target.cwd,
    cwdKnown: ctx.target.cwdKnown,
    git,
    gh,
    claude: onPath("claude", ctx.env) !== undefined,
    codex: onPath("codex", ctx.env) !== undefined,
    store: ctx.reader !== undefined,
    process: ctx.process,
  };
}
