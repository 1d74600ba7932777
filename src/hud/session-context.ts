import { type CcmsgConfig, loadConfig } from "../config.js";
import { ContractError } from "../contract/errors.js";
import { configFile, resolveStateDir, stateFiles } from "../paths.js";
import { onPath } from "../probes/exec.js";
import { type GitProbe, probeGit } from "../probes/git.js";
import type { GhState } from "../probes/github.js";
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
}

export async function openSessionContext(p: Places): Promise<SessionContext> {
  const env = p.env ?? process.env;
  const config = loadConfig(p.configPath);
  const files = stateFiles(p.stateDir);
  const reader = await openStoreReader(files.database);
  const target = resolveTarget(p.flagSid, reader?.sessions, files.statusline, env, p.cwd);
  return { stateDir: p.stateDir, configPath: p.configPath, config, reader, target, env };
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
  throw new ContractError(
    "session_not_found",
    `no session ${flagSid} is known here: it never greeted the instance of ${ctx.stateDir} and no statusline of it was recorded (ccmsg peers lists the sessions)`,
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
    store: ctx.reader !== undefined,
  };
}
